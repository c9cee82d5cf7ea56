#include "gui/state/options.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cmdline/engine_options.h"
#include "core/model/compact_weights.h"
#include "core/util/error.h"
#include "core/util/numbering.h"
#include "gui/state/image_format.h"

namespace kvs::gui {
namespace {

std::string size_problem(const std::string& v) {
    const auto x = v.find('x');
    if (x == std::string::npos) return "'" + v + "' is not WxH";
    const std::string w = cmdline::value_problem(cmdline::whole_in(320, 8192), v.substr(0, x));
    if (!w.empty()) return "width " + w;
    const std::string h = cmdline::value_problem(cmdline::whole_in(240, 8192), v.substr(x + 1));
    return h.empty() ? h : "height " + h;
}

std::string stage_problem(const std::string& v) {
    if (v == "all") return {};
    const std::string why = cmdline::value_problem(cmdline::whole_in(1, kPanelStages), v);
    return why.empty() ? why : why + " (or all)";
}

std::string screenshot_problem(const std::string& v) {
    if (image_format_named(v) != ImageFormat::None) return {};
    return "'" + v + "': a screenshot is written as PNG or JPEG (.jpg): name it so";
}

}  // namespace

std::vector<cmdline::OptionSpec> window_options() {
    using cmdline::one_of;
    using cmdline::OptionSpec;
    using cmdline::whole_in;
    std::vector<OptionSpec> s = cmdline::model_options();
    for (OptionSpec& o : s)
        if (o.name == "weights") o.hidden = true;  // refused by name below: the file's own types
    std::vector<OptionSpec> own = {
        cmdline::context_option("tokens a session may hold (default: the model's context);\nthe "
                                "KV cache is allocated for this many"),
        cmdline::prompt_option("the prompt"),
        cmdline::file_option(),
        {"prefill", "", "run the prefill step"},
        cmdline::new_tokens_option("generate N tokens: the prefill, then N - 1 decode steps",
                                   1 << 20),
        // The older spelling of N decode steps: -n N+1.
        {.name = "decode",
         .value_name = "N",
         .help = "",
         .hidden = true,
         .value = whole_in(0, 1 << 20)},
        {"replay", "TRACE.json",
         "show a recorded run (kvscope-cli generate --trace-json, the\nwindow's export) instead "
         "of a model: no model file needed"},
        {"trace-json", "FILE", "when the window closes, write the run shown as trace JSON"},
        {"trace-events", "FILE",
         "when the window closes, write the run shown as Chrome / Perfetto\ntrace events"},
        {.name = "layer",
         .value_name = "L",
         .help = "the layer of the attention head shown large",
         .value = whole_in(0, 1 << 16)},
        {.name = "head",
         .value_name = "H",
         .help = "the attention head shown large",
         .value = whole_in(0, 1 << 16)},
        {.name = "theme",
         .value_name = "T",
         .help = "light | dark",
         .value = one_of({"light", "dark"})},
        {.name = "font-scale",
         .value_name = "S",
         .help = "text size (1 = 16 px)",
         .value = cmdline::number_in(0.5, 4)},
        {.name = "weight-scale",
         .value_name = "S",
         .help = "attention colours: linear | sqrt | log",
         .value = one_of({"linear", "sqrt", "log"})},
        {.name = "zoom",
         .value_name = "Z",
         .help = "large heatmap: the newest 1/Z of the tokens",
         .value = cmdline::number_in(1, 64)},
        {.name = "size",
         .value_name = "WxH",
         .help = "window size (default 1280x800)",
         .value = cmdline::checked_by(size_problem, "320x240..8192x8192")},
        {.name = "screenshot",
         .value_name = "FILE",
         .help = "render once after the steps above, save it as FILE.png or\nFILE.jpg, exit",
         .value = cmdline::checked_by(screenshot_problem, "FILE.png or FILE.jpg (JPEG)")},
        {"layout-json", "FILE",
         "render once after the steps above, write where each panel, heatmap and text was drawn "
         "(JSON), exit; with --screenshot, of the frame it saves"},
        {.name = "frame-stats",
         .value_name = "N",
         .help = "render N frames, print frame time min/median/max, exit",
         .value = whole_in(1, 1000000)},
        {.name = "lesson",
         .value_name = "N",
         .help = "open lesson N in the lesson panel",
         .value = whole_in(1, 99)},
        {.name = "lesson-step",
         .value_name = "K",
         .help = "at its step K (from 1; the steps before it run too)",
         .value = whole_in(1, 999)},
        {"answer", "A",
         "headless: that step's question (@ask) answered: a choice 1-4, a\nnumber, skip (the "
         "engine's answer without one: the default), or\nwait (the question shown, the step "
         "not run)"},
        {.name = "lang",
         .value_name = "L",
         .help = "en | zh: the window's words and the lessons",
         .value = one_of({"en", "zh"})},
        {"open", "FILE", "headless: then open FILE as Open file... does"},
        {"then-prompt", "TEXT", "headless: then type TEXT into the prompt field", true},
        {.name = "soak-steps",
         .value_name = "N",
         .help = "decode N steps, a frame after each, resetting with a new\nprompt whenever the "
                 "context is full; prints VmRSS, exits",
         .value = whole_in(1, 100000000)},
        {.name = "soak-report",
         .value_name = "N",
         .help = "with --soak-steps: print VmRSS every N steps (250)",
         .value = whole_in(1, 100000000)},
        {"explain", "L,H,P[,S]",
         "open Inside attention: layer L, head H, the query at position P\n(from 1, the "
         "heatmap's row P; last: the newest row); S: the session\ndrawn first (0, or 1: the "
         "twin of compare or bidirectional)"},
        {.name = "explain-stage",
         .value_name = "N",
         .help = "with --explain: the stage shown (1 x, 2 norm, 3-5 x.W -> q, k, v,\n6 RoPE, 7 the "
                 "cache, 8 q and K, 9 q.k, 10 scaled, 11 mask,\n12 softmax, 13 xV, 14 output; all: "
                 "every stage of the arithmetic)",
         .value = cmdline::checked_by(stage_problem, "1..14 or all")},
        {.name = "maximise",
         .value_name = "PANEL",
         .help = "that panel alone in the window (keys 1 to 9; Y the map)",
         .value = one_of({"tokens", "attention", "kv", "time", "next", "toy", "lesson", "inside",
                          "ops", "map"})},
        {"presenter", "", "presenter mode: no toolbar, no title bars (F5)"},
        {"views", "V;V;...",
         "headless, with --layout-json FILE: then one more frame per view V\n(maximise=ID, "
         "stage=N|all, presenter=0|1, explain=L:H:P|off,\nmask=causal|bidirectional, "
         "lesson=off, temperature=T, top-k=N, top-p=P: the controls moved,\nthe Next token panel's "
         "preview), each "
         "recorded to FILE-1.json, FILE-2.json, ..."},
        {"ops", "", "show the op strip (every op of the step shown)"},
        {"ops-fast", "",
         "headless: with --ops, the steps above run the fast path (on a\nGPU the fused kernels), "
         "the strip listing each op in its kernel"},
        {"weight-types", "",
         "show the weight-types panel (key W), measured: the model in\nf32, f16, q8_0 and q4_K"},
        {.name = "op",
         .value_name = "N",
         .help = "with the op strip: op N highlighted (from 0)",
         .value = whole_in(0, 1 << 20)},
        {"serve", "",
         "open the Serving view (key V): the built-in eight prompts over one\npaged KV cache"},
        {"serve-prompts", "FILE", "the Serving view's prompts: one a line (opens the view)"},
        {.name = "serve-block-size",
         .value_name = "N",
         .help = "the Serving view's rows per block (4; opens the view)",
         .value = whole_in(1, 4096)},
        {"no-serve-sharing", "", "the Serving view without the prefix cache (opens the view)"},
        {.name = "serve-steps",
         .value_name = "N",
         .help = "the Serving view's scheduler steps run at the start (opens the view)",
         .value = whole_in(0, 100000)},
        cmdline::timing_option(),
        {"no-settings", "", "do not read or write the settings file"},
    };
    for (auto& o : cmdline::cache_options(true)) own.push_back(o);
    for (auto& o : cmdline::sampler_options()) own.push_back(o);
    for (auto& o : cmdline::trace_budget_options("256M")) own.push_back(o);
    s.insert(s.end(), own.begin(), own.end());
    return s;
}

namespace {

cmdline::Voice voice() {
    return {"usage: kvscope [MODEL] [options]   the window (kvscope-cli is the terminal version)",
            "", " (see kvscope --help)"};
}

}  // namespace

namespace {

// A view's KEY=VALUE pairs, split at ',' (empty pairs skipped).
std::vector<std::pair<std::string, std::string>> view_pairs(const std::string& view) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t at = 0;
    while (at <= view.size()) {
        const auto end = view.find(',', at);
        const std::string kv = view.substr(at, end == std::string::npos ? end : end - at);
        const auto eq = kv.find('=');
        if (!kv.empty())
            out.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return out;
}

// A whole number in lo..hi by the command line's rule ("" when it is), and its value.
std::string whole_of(const std::string& text, int lo, int hi, int& out) {
    const std::string why = cmdline::value_problem(cmdline::whole_in(lo, hi), text);
    if (why.empty()) out = std::stoi(text);  // checked: digits, within an int's range
    return why;
}

}  // namespace

std::vector<ViewSetting> read_view(const std::string& view) {
    static const std::vector<std::string> panels = {
        "", "tokens", "attention", "kv", "time", "next", "toy", "lesson", "inside", "ops", "map"};
    std::vector<ViewSetting> out;
    for (const auto& pair : view_pairs(view)) {
        // Named references, not a structured binding: clang before 16 (the web build's) does not
        // let a lambda capture a binding.
        const std::string &k = pair.first, &v = pair.second;
        auto refuse = [&](const std::string& why) {
            throw Error("'" + k + "=" + v + "' in view '" + view + "' is not a view setting" +
                        (why.empty() ? "" : " (" + why + ")"));
        };
        ViewSetting s;
        std::string why;
        if (k == "maximise" && std::find(panels.begin(), panels.end(), v) != panels.end()) {
            s.key = ViewSetting::Key::maximise;
            s.panel = v;
        } else if (k == "stage" && v == "all") {
            s.key = ViewSetting::Key::stage;
        } else if (k == "stage") {
            s.key = ViewSetting::Key::stage;
            if (!(why = whole_of(v, 1, kPanelStages, s.stage)).empty()) refuse("stage " + why);
            s.stage -= 1;
        } else if (k == "temperature" || k == "top-p") {
            // The controls moved, not yet applied: the Next token panel's preview.
            s.key = k == "temperature" ? ViewSetting::Key::temperature : ViewSetting::Key::top_p;
            const double hi = k == "temperature" ? 2 : 1;
            if (!(why = cmdline::value_problem(cmdline::number_in(0, hi), v)).empty()) refuse(why);
            s.number = std::stof(v);
        } else if (k == "top-k") {
            s.key = ViewSetting::Key::top_k;
            int n = 0;
            if (!(why = whole_of(v, 0, 1 << 20, n)).empty()) refuse(why);
            s.number = static_cast<float>(n);
        } else if (k == "presenter" && (v == "0" || v == "1")) {
            s.key = ViewSetting::Key::presenter;
            s.on = v == "1";
        } else if (k == "mask" && (v == "causal" || v == "bidirectional")) {
            s.key = ViewSetting::Key::mask;
            s.on = v == "bidirectional";
        } else if (k == "lesson" && v == "off") {
            s.key = ViewSetting::Key::lesson_off;
        } else if (k == "explain" && v == "off") {
            s.key = ViewSetting::Key::explain;
        } else if (k == "explain") {
            // L:H:P, as --explain's L,H,P: layer and head from 0, P the query's position (from
            // 1) or "last".
            s.key = ViewSetting::Key::explain;
            s.on = true;
            const auto c1 = v.find(':'), c2 = c1 == std::string::npos ? c1 : v.find(':', c1 + 1);
            if (c2 == std::string::npos) refuse("explain=LAYER:HEAD:POSITION");
            const std::string pos = v.substr(c2 + 1);
            if (!(why = whole_of(v.substr(0, c1), 0, 1 << 16, s.layer)).empty())
                refuse("layer " + why);
            if (!(why = whole_of(v.substr(c1 + 1, c2 - c1 - 1), 0, 1 << 16, s.head)).empty())
                refuse("head " + why);
            if (pos != "last") {
                if (!(why = whole_of(pos, 1, 1 << 20, s.row)).empty())
                    refuse("position " + why + ", or last");
                s.row = index_of_position(s.row);
            }
        } else {
            refuse("");
        }
        out.push_back(s);
    }
    return out;
}

std::string check_view(const std::string& view) {
    try {
        read_view(view);
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

std::string usage() {
    char name[] = "kvscope";
    char* argv[] = {name};
    return cmdline::CommandLine(voice(), window_options(), 1, argv, 1, "model").usage() +
           "keys: F1 shows them all (Space/Right step, P play, R reset, C cache mode, ...)\n";
}

AppOptions parse_options(int argc, char** argv) {
    const cmdline::CommandLine c(voice(), window_options(), argc, argv, 1, "model");
    AppOptions o;
    o.help = c.help();
    o.version = c.version();
    o.model = c.str("model");
    o.tokenizer = c.str("tokenizer");
    o.backend = cmdline::backend_from(c, "");
    o.threads = cmdline::threads_from(c);
    // The window opens every model with its weights as the file stores them (a quantised GGUF
    // compact on the CPU, expanded for a backend that multiplies float32): no other choice.
    if (const WeightsWanted w = cmdline::weights_from(c))
        c.fail("--weights " + weight_type_option_name(*w) +
               ": the window keeps a model's weights as the file stores them (kvscope-cli "
               "generate, compare and bench take --weights)");
    o.prompt = cmdline::prompt_from(c);
    if (c.has("cache") || c.has("no-cache")) o.cache = cmdline::cache_from(c, CacheView::On);
    o.prefill = c.has("prefill");
    if (c.has("decode") && c.has("max-new-tokens"))
        c.fail("--decode N and --max-new-tokens N+1 say the same: give one");
    o.decode = c.integer("decode", 0);
    if (c.has("max-new-tokens")) {
        // N tokens: the prefill chooses the first, each decode step one more.
        o.prefill = true;
        o.decode = c.integer("max-new-tokens", 1) - 1;
    }
    o.context = c.integer("context", 0);
    o.replay = c.str("replay");
    o.trace_json = c.str("trace-json");
    o.trace_events = c.str("trace-events");
    if (!o.replay.empty() && (!o.model.empty() || o.prefill || o.decode > 0 || o.prompt))
        c.fail("--replay shows a recorded run: it takes no --model, prompt or steps");
    o.layer = c.integer("layer", -1);
    o.head = c.integer("head", -1);
    if (c.has("theme")) o.theme = c.checked("theme", "");
    if (c.has("font-scale")) o.font_scale = static_cast<float>(c.number("font-scale", 1));
    if (c.has("weight-scale")) o.weight_scale = c.checked("weight-scale", "");
    if (c.has("temperature")) o.temperature = static_cast<float>(c.number("temperature", 0));
    if (c.has("top-k")) o.top_k = c.integer("top-k", 0);
    if (c.has("top-p")) o.top_p = static_cast<float>(c.number("top-p", 0));
    if (c.has("seed")) o.seed = c.unsigned_integer("seed", 0);
    o.zoom = static_cast<float>(c.number("zoom", 1));
    if (c.has("size")) {  // checked by its rule: WxH within the ranges
        const std::string v = c.str("size");
        const auto x = v.find('x');
        o.width = c.whole("size", v.substr(0, x), 320, 8192);
        o.height = c.whole("size", v.substr(x + 1), 240, 8192);
    }
    o.screenshot = c.str("screenshot");
    o.layout_json = c.str("layout-json");
    o.frame_stats = c.integer("frame-stats", 0);
    o.lesson = c.integer("lesson", 0);
    o.lesson_step = c.integer("lesson-step", 1);
    if (c.has("lang")) o.lang = c.checked("lang", "");
    o.answer = c.str("answer");
    o.open_file = c.str("open");
    if (c.has("then-prompt")) o.then_prompt = c.str("then-prompt");
    o.soak_steps = c.integer("soak-steps", 0);
    o.soak_report = c.integer("soak-report", o.soak_report);
    o.trace_budget = cmdline::trace_budget_from(c, 0);
    if (c.has("explain")) {
        const std::string v = c.str("explain");
        const auto c1 = v.find(','), c2 = c1 == std::string::npos ? c1 : v.find(',', c1 + 1);
        const auto c3 = c2 == std::string::npos ? c2 : v.find(',', c2 + 1);
        if (c2 == std::string::npos ||
            (c3 != std::string::npos && v.find(',', c3 + 1) != std::string::npos))
            c.fail("--explain: '" + v + "' is not LAYER,HEAD,POSITION[,SESSION]");
        o.explain = true;
        o.explain_layer = c.whole("explain", v.substr(0, c1), 0, 1 << 16);
        o.explain_head = c.whole("explain", v.substr(c1 + 1, c2 - c1 - 1), 0, 1 << 16);
        if (c3 != std::string::npos) o.explain_session = c.whole("explain", v.substr(c3 + 1), 0, 1);
        const std::string pos = v.substr(c2 + 1, c3 == std::string::npos ? c3 : c3 - c2 - 1);
        o.explain_q_pos =
            pos == "last" ? -1 : index_of_position(c.whole("explain", pos, 1, 1 << 20));
    }
    if (c.has("explain-stage")) {
        const std::string v = c.str("explain-stage");
        o.explain_stage = v == "all" ? -1 : c.whole("explain-stage", v, 1, kPanelStages) - 1;
        if (!o.explain) c.fail("--explain-stage needs --explain L,H,P");
    }
    o.maximise = c.checked("maximise", "");
    o.presenter = c.has("presenter");
    if (c.has("views")) {
        const std::string v = c.str("views");
        std::size_t at = 0;
        while (at <= v.size()) {
            const auto end = v.find(';', at);
            const std::string one = v.substr(at, end == std::string::npos ? end : end - at);
            if (!one.empty()) o.views.push_back(one);
            if (end == std::string::npos) break;
            at = end + 1;
        }
        for (const auto& one : o.views) {
            const std::string why = check_view(one);
            if (!why.empty()) c.fail("--views: " + why);
        }
        if (o.layout_json.empty()) c.fail("--views needs --layout-json FILE");
    }
    o.ops = c.has("ops") || c.has("op");
    o.ops_fast = c.has("ops-fast");
    o.weight_types = c.has("weight-types");
    o.op = c.integer("op", -1);
    o.serve_prompts = c.has("serve-prompts") ? c.str("serve-prompts") : "";
    o.serve_block_size = c.integer("serve-block-size", 4);
    o.serve_sharing = !c.has("no-serve-sharing");
    o.serve_steps = c.integer("serve-steps", 0);
    o.serve = c.has("serve") || c.has("serve-prompts") || c.has("serve-block-size") ||
              c.has("no-serve-sharing") || c.has("serve-steps");
    o.timing_runs = cmdline::timing_runs_from(c, 0);
    o.no_settings = c.has("no-settings");
    const bool one_frame = !o.screenshot.empty() || !o.layout_json.empty();
    if (int(one_frame) + int(o.frame_stats > 0) + int(o.soak_steps > 0) > 1)
        c.fail("--screenshot or --layout-json, --frame-stats and --soak-steps cannot be combined");
    if (!o.answer.empty() && (o.lesson == 0 || !o.headless()))
        c.fail("--answer answers the question of --lesson's step, in a headless run");
    if ((!o.open_file.empty() || o.then_prompt) && !o.headless())
        c.fail(
            "--open and --then-prompt are for headless runs (with --screenshot or --layout-json)");
    return o;
}

}  // namespace kvs::gui
