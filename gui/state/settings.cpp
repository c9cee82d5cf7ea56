#include "gui/state/settings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "core/session/cache_view.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/text_file.h"
#include "core/util/utf8.h"
#include "gui/state/options.h"
#include "kernels/backend_factory.h"

namespace kvs::gui {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Shortest of 6 or 9 significant digits that reads back as the same float.
std::string num(float x) {
    for (int digits : {6, 9}) {
        std::ostringstream os;
        os.precision(digits);
        os << x;
        float back = 0;
        std::istringstream(os.str()) >> back;
        if (back == x || digits == 9) return os.str();
    }
    return "0";
}

}  // namespace

std::string settings_dir() {
    if (auto d = env("KVSCOPE_CONFIG_DIR"); !d.empty()) return d;
    if (auto x = env("XDG_CONFIG_HOME"); !x.empty()) return (fs::path(x) / "kvscope").string();
    if (auto h = env("HOME"); !h.empty()) return (fs::path(h) / ".config" / "kvscope").string();
    return "";
}

namespace {

// The model names the window opens without a file (kvscope --model NAME).
bool named_model(const std::string& m) {
    return m == "default" || m == "toy" || m == "stories260K";
}

// One field of the file: the option it is kept as, how a value the option's rule accepted is
// stored, and what is written for it (nullopt: no line, as the command line would have no option).
struct Field {
    const char* name;
    void (*set)(Settings&, const std::string&);
    std::optional<std::string> (*get)(const Settings&);
};

int whole(const std::string& v) {
    return static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
}
float real(const std::string& v) {
    return static_cast<float>(std::strtod(v.c_str(), nullptr));
}

// A model path that cannot be written on one line (it would become other keys) is not
// remembered.
bool path_fits(const std::string& p) {
    return !p.empty() && p.find_first_of("\r\n") == std::string::npos;
}

// What load_settings reads of a file; a larger one is not kvscope's (its lines past the bound
// would be lost, or a value cut mid-way). A prompt longer than kMaxPromptBytes is not remembered,
// so what the window writes (a model path is at most PATH_MAX, 4 KiB) always reads back whole.
constexpr std::size_t kMaxSettingsBytes = 64 * 1024;
constexpr std::size_t kMaxPromptBytes = 16 * 1024;

const std::vector<Field>& fields() {
    static const std::vector<Field> f = {
        {"theme", [](Settings& s, const std::string& v) { s.theme = v; },
         [](const Settings& s) -> std::optional<std::string> { return s.theme; }},
        {"font-scale", [](Settings& s, const std::string& v) { s.font_scale = real(v); },
         [](const Settings& s) -> std::optional<std::string> { return num(s.font_scale); }},
        // --model's value: a name, or a file (then also the path Open file shows).
        {"model",
         [](Settings& s, const std::string& v) {
             s.model = named_model(v) ? v : "file";
             if (!named_model(v)) s.model_path = v;
         },
         [](const Settings& s) -> std::optional<std::string> {
             if (s.model != "file") return s.model;
             return path_fits(s.model_path) ? s.model_path : "default";
         }},
        {"model-path", [](Settings& s, const std::string& v) { s.model_path = v; },
         [](const Settings& s) -> std::optional<std::string> {
             if (!path_fits(s.model_path)) return std::nullopt;
             return s.model_path;
         }},
        {"backend", [](Settings& s, const std::string& v) { s.backend = v; },
         [](const Settings& s) -> std::optional<std::string> { return s.backend; }},
        {"cache", [](Settings& s, const std::string& v) { s.cache = *parse_cache_view(v); },
         [](const Settings& s) -> std::optional<std::string> { return cache_view_name(s.cache); }},
        // Kept on one line: newlines inside the prompt become spaces.
        {"prompt", [](Settings& s, const std::string& v) { s.prompt = v; },
         [](const Settings& s) -> std::optional<std::string> {
             if (s.prompt.size() > kMaxPromptBytes) return std::nullopt;
             std::string p = s.prompt;
             for (char& c : p)
                 if (c == '\n' || c == '\r') c = ' ';
             return p;
         }},
        {"play-speed", [](Settings& s, const std::string& v) { s.play_speed = real(v); },
         [](const Settings& s) -> std::optional<std::string> { return num(s.play_speed); }},
        {"layer", [](Settings& s, const std::string& v) { s.layer = whole(v); },
         [](const Settings& s) -> std::optional<std::string> { return std::to_string(s.layer); }},
        {"head", [](Settings& s, const std::string& v) { s.head = whole(v); },
         [](const Settings& s) -> std::optional<std::string> { return std::to_string(s.head); }},
        {"weight-scale", [](Settings& s, const std::string& v) { s.weight_scale = v; },
         [](const Settings& s) -> std::optional<std::string> { return s.weight_scale; }},
        {"log-time", [](Settings& s, const std::string& v) { s.log_time = v == "1"; },
         [](const Settings& s) -> std::optional<std::string> { return s.log_time ? "1" : "0"; }},
        {"temperature", [](Settings& s, const std::string& v) { s.temperature = real(v); },
         [](const Settings& s) -> std::optional<std::string> { return num(s.temperature); }},
        {"top-k", [](Settings& s, const std::string& v) { s.top_k = whole(v); },
         [](const Settings& s) -> std::optional<std::string> { return std::to_string(s.top_k); }},
        {"top-p", [](Settings& s, const std::string& v) { s.top_p = real(v); },
         [](const Settings& s) -> std::optional<std::string> { return num(s.top_p); }},
        {"seed",
         [](Settings& s, const std::string& v) { s.seed = std::strtoull(v.c_str(), nullptr, 10); },
         [](const Settings& s) -> std::optional<std::string> { return std::to_string(s.seed); }},
        {"lang", [](Settings& s, const std::string& v) { s.lang = v; },
         [](const Settings& s) -> std::optional<std::string> { return s.lang; }},
        // --lesson N --lesson-step K (K from 1); no lines when no lesson is open.
        {"lesson", [](Settings& s, const std::string& v) { s.lesson = whole(v); },
         [](const Settings& s) -> std::optional<std::string> {
             if (s.lesson <= 0) return std::nullopt;
             return std::to_string(s.lesson);
         }},
        {"lesson-step", [](Settings& s, const std::string& v) { s.lesson_step = whole(v) - 1; },
         [](const Settings& s) -> std::optional<std::string> {
             if (s.lesson <= 0) return std::nullopt;
             return std::to_string(s.lesson_step + 1);
         }},
    };
    return f;
}

// One `key = value` line of the file.
struct Line {
    int number;
    std::string key;   // as the file spells it
    std::string name;  // the option's name
    std::string value;
};

// What the older file wrote, read as it meant (a key spelt with '_', font_scale, is read as the
// option font-scale): `lesson_step` from 0, `lesson = 0` for no lesson, `model = file` with the
// file in model_path. Returns false for a line that then says nothing (no lesson, no file), or
// that cannot be read (and says why).
bool as_older_file_meant(Line& l, const std::vector<Line>& lines, std::string& why) {
    if (l.name == "lesson" && l.value == "0") return false;
    if (l.key == "lesson_step") {
        why = cmdline::value_problem(cmdline::whole_in(0, 998), l.value);
        if (!why.empty()) return false;
        l.value = std::to_string(whole(l.value) + 1);
    }
    if (l.name == "model" && l.value == "file") {
        for (const Line& p : lines)
            if (p.name == "model-path") l.value = p.value;
        return l.value != "file" && !l.value.empty();
    }
    return true;
}

std::vector<Line> read_lines(std::string_view text) {
    std::vector<Line> out;
    int ln = 0;
    for (std::size_t a = 0; a < text.size();) {
        std::size_t nl = text.find('\n', a);
        if (nl == std::string_view::npos) nl = text.size();
        const std::string line(text.substr(a, nl - a));
        a = nl + 1;
        ++ln;
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        Line l{ln, trim(line.substr(0, eq)), "", trim(line.substr(eq + 1))};
        l.name = l.key;
        for (char& c : l.name)
            if (c == '_') c = '-';
        out.push_back(std::move(l));
    }
    return out;
}

constexpr const char* kHeader =
    "# kvscope settings, rewritten on exit: one option a line as kvscope --help names it\n"
    "# (font-scale = 2 is --font-scale 2); model-path, play-speed and log-time are kept here only.";

}  // namespace

std::vector<cmdline::OptionSpec> settings_options() {
    using cmdline::OptionSpec;
    std::vector<OptionSpec> window = window_options();
    std::vector<OptionSpec> out = {
        {.name = "model-path",
         .value_name = "FILE",
         .help = "the path Open file... shows (empty: none)",
         .empty_ok = true},
        {.name = "play-speed",
         .value_name = "N",
         .help = "steps per second while playing (P)",
         .value = cmdline::number_in(0.01, 100)},
        {.name = "log-time",
         .value_name = "0|1",
         .help = "the time plot's log scale",
         .value = cmdline::one_of({"0", "1"})},
    };
    for (const Field& f : fields())
        if (const OptionSpec* o = cmdline::find_option(window, f.name)) out.push_back(*o);
    return out;
}

Settings parse_settings(std::string_view text, const std::string& name,
                        std::vector<std::string>* problems) {
    static const std::vector<cmdline::OptionSpec> options = settings_options();
    try {
        text = utf8_text(text, name);
    } catch (const Error& e) {  // UTF-16: every line would be an unknown key, skipped unsaid
        if (problems)
            problems->push_back(escape_for_one_line(e.what()) + "; using the default settings");
        return Settings();
    }
    std::vector<Line> lines = read_lines(text);
    Settings s;
    for (Line& l : lines) {
        const cmdline::OptionSpec* o = cmdline::find_option(options, l.name);
        const auto f = std::find_if(fields().begin(), fields().end(),
                                    [&](const Field& x) { return l.name == x.name; });
        if (!o || f == fields().end()) continue;  // not a setting (a newer kvscope's, say)
        std::string why;
        if (!as_older_file_meant(l, lines, why)) {
            // Says nothing, or refused with why.
        } else if (l.value.empty() && !o->empty_ok) {
            why = "needs a value";
        } else {
            why = cmdline::value_problem(o->value, l.value);
            // "cuda" on a machine without a device would open the window with no model.
            if (why.empty() && l.name == "backend" && l.value == "cuda") {
                const std::string no = cuda_unavailable_reason();
                if (!no.empty()) why = "this machine has no cuda backend (" + no + ")";
            }
            if (why.empty()) f->set(s, l.value);
        }
        // A bad value is not stored: the field keeps its default.
        if (!why.empty() && problems)
            problems->push_back(escape_for_one_line(name + ":" + std::to_string(l.number) + ": " +
                                                    l.key + ": " + why + "; using the default"));
    }
    return s;
}

Settings load_settings(const std::string& path, std::vector<std::string>* problems) {
    std::error_code ec;
    const auto type = fs::status(path, ec).type();
    if (type == fs::file_type::not_found) return Settings();
    if (type != fs::file_type::regular) {
        // A FIFO would block the start, a device would never end.
        if (problems)
            problems->push_back(escape_for_one_line(path) +
                                ": not a regular file; using the default settings");
        return Settings();
    }
    // Read here, not by read_text_file: that notes the file as an input of this run, which no
    // output may replace, and settings.txt is rewritten on the way out (parse_settings drops a
    // byte order mark through the same utf8_text).
    std::ifstream f(path, std::ios::binary);
    if (!f) return Settings();
    // A settings file is a few hundred bytes; a huge one is not ours, and is not read in part.
    std::string text(kMaxSettingsBytes + 1, '\0');
    f.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(f.gcount()));
    if (text.size() > kMaxSettingsBytes) {
        if (problems)
            problems->push_back(escape_for_one_line(path) + ": more than " +
                                std::to_string(kMaxSettingsBytes / 1024) +
                                " KiB, more than a settings file of kvscope's holds; using the "
                                "default settings");
        return Settings();
    }
    return parse_settings(text, path, problems);
}

std::string settings_text(const Settings& s) {
    std::string out = std::string(kHeader) + "\n";
    for (const Field& f : fields())
        if (const auto v = f.get(s)) out += std::string(f.name) + " = " + *v + "\n";
    return out;
}

std::string save_settings(const Settings& s, const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
    try {
        // kvscope's own file: an older or hand-edited one is rewritten whatever it starts with.
        write_output_file(path, settings_text(s), {"settings file", nullptr, true});  // always ours
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace kvs::gui
