#include "gui/settings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <vector>

#include "core/session/cache_view.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/utf8.h"
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

// One field of the file: its key and how a value is checked and stored. `set` returns what the
// value must be (for the message) when it is bad, else stores it and returns "".
struct Field {
    const char* key;
    std::function<std::string(Settings&, const std::string&)> set;
};

// Whole number in lo..hi, digits (and a leading '-') only.
std::optional<long long> whole(const std::string& v, long long lo, long long hi) {
    if (v.empty() || v.size() > 19 || v.find_first_not_of("-0123456789") != std::string::npos)
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE || x < lo || x > hi) return std::nullopt;
    return x;
}
// Finite number in lo..hi.
std::optional<float> real(const std::string& v, double lo, double hi) {
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !std::isfinite(x) || x < lo || x > hi) return std::nullopt;
    return static_cast<float>(x);
}

Field one_of(const char* key, std::string Settings::*f, std::vector<std::string> allowed) {
    return {key, [f, allowed](Settings& s, const std::string& v) -> std::string {
                for (const auto& a : allowed)
                    if (v == a) {
                        s.*f = v;
                        return "";
                    }
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
                return "one of " + list;
            }};
}
template <class T>
Field integer(const char* key, T Settings::*f, long long lo, long long hi) {
    return {key, [f, lo, hi](Settings& s, const std::string& v) -> std::string {
                const auto x = whole(v, lo, hi);
                if (!x)
                    return "a whole number in " + std::to_string(lo) + ".." + std::to_string(hi);
                s.*f = static_cast<T>(*x);
                return "";
            }};
}
Field number(const char* key, float Settings::*f, double lo, double hi, const char* range) {
    return {key, [f, lo, hi, range](Settings& s, const std::string& v) -> std::string {
                const auto x = real(v, lo, hi);
                if (!x) return std::string("a number in ") + range;
                s.*f = *x;
                return "";
            }};
}
Field text(const char* key, std::string Settings::*f) {
    return {key, [f](Settings& s, const std::string& v) -> std::string {
                s.*f = v;
                return "";
            }};
}

// The ranges are the command line's (kvscope --help, kvscope-cli --help): a value the options
// refuse is refused here too.
const std::vector<Field>& fields() {
    static const std::vector<Field> f = {
        one_of("theme", &Settings::theme, {"dark", "light"}),
        number("font_scale", &Settings::font_scale, 0.5, 4, "0.5..4"),
        one_of("model", &Settings::model, {"default", "toy", "stories260K", "file"}),
        text("model_path", &Settings::model_path),
        {"backend",
         [](Settings& s, const std::string& v) -> std::string {
             if (v != "auto" && v != "cpu" && v != "cuda") return "one of auto, cpu, cuda";
             // "cuda" on a machine without a device would open the window with no model.
             if (v == "cuda") {
                 const std::string why = cuda_unavailable_reason();
                 if (!why.empty()) return "a backend this machine has (cuda: " + why + ")";
             }
             s.backend = v;
             return "";
         }},
        {"cache",
         [](Settings& s, const std::string& v) -> std::string {
             const auto c = parse_cache_view(v);
             if (!c) return "one of on, off, compare, bidirectional";
             s.cache = *c;
             return "";
         }},
        text("prompt", &Settings::prompt),
        number("play_speed", &Settings::play_speed, 0.01, 100, "0.01..100"),
        integer("layer", &Settings::layer, 0, 1 << 16),
        integer("head", &Settings::head, 0, 1 << 16),
        one_of("weight_scale", &Settings::weight_scale, {"linear", "sqrt", "log"}),
        {"log_time",
         [](Settings& s, const std::string& v) -> std::string {
             if (v != "0" && v != "1") return "0 or 1";
             s.log_time = v == "1";
             return "";
         }},
        number("temperature", &Settings::temperature, 0, 100, "0..100"),
        integer("top_k", &Settings::top_k, 0, 1 << 20),
        number("top_p", &Settings::top_p, 0, 1, "0..1"),
        {"seed",
         [](Settings& s, const std::string& v) -> std::string {
             const bool digits = !v.empty() && v.size() <= 20 &&
                                 v.find_first_not_of("0123456789") == std::string::npos;
             errno = 0;
             const unsigned long long x = digits ? std::strtoull(v.c_str(), nullptr, 10) : 0;
             if (!digits || errno == ERANGE) return "a whole number from 0 to 2^64-1";
             s.seed = x;
             return "";
         }},
        one_of("lang", &Settings::lang, {"en", "zh"}),
        integer("lesson", &Settings::lesson, 0, 99),
        integer("lesson_step", &Settings::lesson_step, 0, 999),
    };
    return f;
}

}  // namespace

Settings parse_settings(std::string_view text, const std::string& name,
                        std::vector<std::string>* problems) {
    Settings s;
    int ln = 0;
    for (std::size_t a = 0; a < text.size();) {
        std::size_t nl = text.find('\n', a);
        if (nl == std::string_view::npos) nl = text.size();
        const std::string line(text.substr(a, nl - a));
        a = nl + 1;
        ++ln;
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        const std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
        for (const Field& f : fields()) {
            if (k != f.key) continue;
            const std::string want = f.set(s, v);
            // A bad value is not stored: the field keeps its default.
            if (!want.empty() && problems)
                problems->push_back(escape_for_one_line(name + ":" + std::to_string(ln) + ": " + k +
                                                        " = " + v + " is not " + want +
                                                        "; using the default"));
            break;
        }
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
    std::ifstream f(path, std::ios::binary);
    if (!f) return Settings();
    // A settings file is a few hundred bytes; a huge one is not ours.
    std::string text(64 * 1024, '\0');
    f.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(f.gcount()));
    return parse_settings(text, path, problems);
}

std::string settings_text(const Settings& s) {
    // The prompt is kept on one line: newlines inside it become spaces.
    std::string prompt = s.prompt;
    for (char& c : prompt)
        if (c == '\n' || c == '\r') c = ' ';
    // A path with a line break cannot be written on one line (it would become other keys): such
    // a model is not remembered.
    const bool path_fits = s.model_path.find_first_of("\r\n") == std::string::npos;
    const std::string model = path_fits ? s.model : (s.model == "file" ? "default" : s.model);
    std::ostringstream f;
    f << "# kvscope settings (rewritten on exit)\n"
      << "theme = " << s.theme << "\nfont_scale = " << num(s.font_scale) << "\nmodel = " << model
      << "\nmodel_path = " << (path_fits ? s.model_path : "") << "\nbackend = " << s.backend
      << "\ncache = " << cache_view_name(s.cache) << "\nprompt = " << prompt
      << "\nplay_speed = " << num(s.play_speed) << "\nlayer = " << s.layer << "\nhead = " << s.head
      << "\nweight_scale = " << s.weight_scale << "\nlog_time = " << (s.log_time ? 1 : 0)
      << "\ntemperature = " << num(s.temperature) << "\ntop_k = " << s.top_k
      << "\ntop_p = " << num(s.top_p) << "\nseed = " << s.seed << "\nlang = " << s.lang
      << "\nlesson = " << s.lesson << "\nlesson_step = " << s.lesson_step << "\n";
    return f.str();
}

std::string save_settings(const Settings& s, const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
    try {
        write_output_file(path, settings_text(s));
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace kvs::gui
