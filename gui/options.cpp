#include "gui/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "core/error.h"

namespace kvs::gui {
namespace {

Error bad(const std::string& what) {
    return Error(what + " (see kvscope --help)");
}

int whole(const std::string& name, const std::string& v, int lo, int hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE)
        throw bad("--" + name + ": '" + v + "' is not a whole number");
    if (x < lo || x > hi)
        throw bad("--" + name + ": " + v + " is out of range (" + std::to_string(lo) + ".." +
                  std::to_string(hi) + ")");
    return static_cast<int>(x);
}

float number(const std::string& name, const std::string& v, double lo, double hi) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x))
        throw bad("--" + name + ": '" + v + "' is not a number");
    if (x < lo || x > hi) throw bad("--" + name + ": " + v + " is out of range");
    return static_cast<float>(x);
}

std::string one_of(const std::string& name, const std::string& v,
                   std::initializer_list<const char*> allowed) {
    std::string list;
    for (const char* a : allowed) {
        if (v == a) return v;
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw bad("--" + name + ": '" + v + "' is not one of " + list);
}

}  // namespace

std::string usage() {
    return "usage: kvscope [options]       the window (kvscope-cli is the terminal version)\n"
           "  --model M              default | toy | stories260K | FILE.bin\n"
           "  --tokenizer FILE       llama2.c tokenizer (default: found beside the model)\n"
           "  --backend B            auto | cpu | cuda\n"
           "  --threads N            CPU backend threads (default 1; small ops stay on one)\n"
           "  --prompt TEXT          the prompt\n"
           "  --cache MODE           on | off | compare (both side by side)\n"
           "  --prefill              run the prefill step\n"
           "  --decode N             run N decode steps (after the prefill)\n"
           "  --layer L --head H     the attention head shown large\n"
           "  --theme T              light | dark\n"
           "  --font-scale S         text size (1 = 16 px)\n"
           "  --weight-scale S       attention colours: linear | sqrt | log\n"
           "  --zoom Z               large heatmap: the newest 1/Z of the tokens (1..64)\n"
           "  --size WxH             window size (default 1280x800)\n"
           "  --screenshot FILE.png  render once after the steps above, save a PNG, exit\n"
           "  --layout-json FILE     with --screenshot: where each panel and heatmap was drawn\n"
           "  --frame-stats N        render N frames, print frame time min/median/max, exit\n"
           "  --lesson N             open lesson N in the lesson panel\n"
           "  --lesson-step K        at its step K (from 1; the steps before it run too)\n"
           "  --lang L               en | zh: the window's words and the lessons\n"
           "  --open FILE            headless: then open FILE as Open file... does\n"
           "  --then-prompt TEXT     headless: then type TEXT into the prompt field\n"
           "  --soak-steps N         decode N steps, a frame after each, resetting with a new\n"
           "                         prompt whenever the context is full; prints VmRSS, exits\n"
           "  --soak-report N        with --soak-steps: print VmRSS every N steps (250)\n"
           "  --trace-budget-mib N   memory for the steps' payloads (default 256); past it the\n"
           "                         oldest steps keep only their numbers\n"
           "  --explain L,H,ROW      open Inside attention: layer L, head H, query position ROW\n"
           "                         (from 0, as the heatmap's rows; last: the newest row)\n"
           "  --ops                  show the op strip (every op of the step shown)\n"
           "  --op N                 with the op strip: op N highlighted (from 0)\n"
           "  --timing-runs N        time each step under 10 ms as the median of N runs (3)\n"
           "  --no-settings          do not read or write the settings file\n"
           "  --help                 this text\n"
           "keys: F1 shows them all (Space/Right step, P play, R reset, C cache mode, ...)\n";
}

AppOptions parse_options(int argc, char** argv) {
    AppOptions o;
    using Setter = std::function<void(const std::string&)>;
    const std::map<std::string, Setter> valued{
        {"model", [&](const std::string& v) { o.model = v; }},
        {"tokenizer", [&](const std::string& v) { o.tokenizer = v; }},
        {"backend",
         [&](const std::string& v) {
             o.backend = one_of("backend", v, {"auto", "cpu", "cuda"});
         }},
        {"threads", [&](const std::string& v) { o.threads = whole("threads", v, 1, 256); }},
        {"prompt", [&](const std::string& v) { o.prompt = v; }},
        {"cache",
         [&](const std::string& v) {
             o.cache = *parse_cache_view(one_of("cache", v, {"on", "off", "compare"}));
         }},
        {"decode", [&](const std::string& v) { o.decode = whole("decode", v, 0, 1 << 20); }},
        {"layer", [&](const std::string& v) { o.layer = whole("layer", v, 0, 1 << 16); }},
        {"head", [&](const std::string& v) { o.head = whole("head", v, 0, 1 << 16); }},
        {"theme",
         [&](const std::string& v) {
             o.theme = one_of("theme", v, {"light", "dark"});
         }},
        {"font-scale",
         [&](const std::string& v) { o.font_scale = number("font-scale", v, 0.5, 4); }},
        {"weight-scale",
         [&](const std::string& v) {
             o.weight_scale = one_of("weight-scale", v, {"linear", "sqrt", "log"});
         }},
        {"zoom", [&](const std::string& v) { o.zoom = number("zoom", v, 1, 64); }},
        {"size",
         [&](const std::string& v) {
             const auto x = v.find('x');
             if (x == std::string::npos) throw bad("--size: '" + v + "' is not WxH");
             o.width = whole("size", v.substr(0, x), 320, 8192);
             o.height = whole("size", v.substr(x + 1), 240, 8192);
         }},
        {"screenshot", [&](const std::string& v) { o.screenshot = v; }},
        {"layout-json", [&](const std::string& v) { o.layout_json = v; }},
        {"frame-stats",
         [&](const std::string& v) { o.frame_stats = whole("frame-stats", v, 1, 1000000); }},
        {"lesson", [&](const std::string& v) { o.lesson = whole("lesson", v, 1, 99); }},
        {"lesson-step",
         [&](const std::string& v) { o.lesson_step = whole("lesson-step", v, 1, 999); }},
        {"lang",
         [&](const std::string& v) {
             o.lang = one_of("lang", v, {"en", "zh"});
         }},
        {"open", [&](const std::string& v) { o.open_file = v; }},
        {"then-prompt", [&](const std::string& v) { o.then_prompt = v; }},
        {"soak-steps",
         [&](const std::string& v) { o.soak_steps = whole("soak-steps", v, 1, 100000000); }},
        {"trace-budget-mib",
         [&](const std::string& v) {
             o.trace_budget_mib = whole("trace-budget-mib", v, 1, 1 << 20);
         }},
        {"explain",
         [&](const std::string& v) {
             const auto c1 = v.find(','), c2 = c1 == std::string::npos ? c1 : v.find(',', c1 + 1);
             if (c2 == std::string::npos || v.find(',', c2 + 1) != std::string::npos)
                 throw bad("--explain: '" + v + "' is not LAYER,HEAD,ROW");
             o.explain = true;
             o.explain_layer = whole("explain", v.substr(0, c1), 0, 1 << 16);
             o.explain_head = whole("explain", v.substr(c1 + 1, c2 - c1 - 1), 0, 1 << 16);
             const std::string row = v.substr(c2 + 1);
             o.explain_row = row == "last" ? -1 : whole("explain", row, 0, 1 << 20);
         }},
        {"op",
         [&](const std::string& v) {
             o.op = whole("op", v, 0, 1 << 20);
             o.ops = true;
         }},
        {"soak-report",
         [&](const std::string& v) { o.soak_report = whole("soak-report", v, 1, 100000000); }},
        {"timing-runs",
         [&](const std::string& v) { o.timing_runs = whole("timing-runs", v, 1, 100); }},
    };
    const std::map<std::string, std::function<void()>> flags{
        {"prefill", [&] { o.prefill = true; }},
        {"ops", [&] { o.ops = true; }},
        {"no-settings", [&] { o.no_settings = true; }},
        {"help", [&] { o.help = true; }},
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h") {
            o.help = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) throw bad("unexpected argument '" + a + "'");
        const auto eq = a.find('=');
        const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        if (auto f = flags.find(name); f != flags.end()) {
            if (eq != std::string::npos) throw bad("--" + name + " takes no value");
            f->second();
            continue;
        }
        auto s = valued.find(name);
        if (s == valued.end()) throw bad("unknown option '--" + name + "'");
        std::string value;
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
        } else {
            if (i + 1 >= argc) throw bad("--" + name + " needs a value");
            value = argv[++i];
        }
        // `--model ""` or `--screenshot ""` (an unset shell variable) would silently mean "not
        // given" (an interactive window for a headless run): only prompts may be empty.
        if (value.empty() && name != "prompt" && name != "then-prompt")
            throw bad("--" + name + " needs a value, not an empty string");
        s->second(value);
    }
    if (!o.layout_json.empty() && o.screenshot.empty())
        throw bad("--layout-json needs --screenshot");
    if (int(!o.screenshot.empty()) + int(o.frame_stats > 0) + int(o.soak_steps > 0) > 1)
        throw bad("--screenshot, --frame-stats and --soak-steps cannot be combined");
    if ((!o.open_file.empty() || o.then_prompt) && !o.headless())
        throw bad("--open and --then-prompt are for headless runs (with --screenshot)");
    return o;
}

}  // namespace kvs::gui
