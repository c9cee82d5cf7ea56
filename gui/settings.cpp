#include "gui/settings.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

template <class T>
void read_number(const std::string& v, T& out) {
    std::istringstream is(v);
    T x{};
    if (is >> x && is.eof()) out = x;
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

Settings load_settings(const std::string& path) {
    Settings s;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        const std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
        if (k == "theme" && (v == "dark" || v == "light"))
            s.theme = v;
        else if (k == "font_scale")
            read_number(v, s.font_scale);
        else if (k == "model")
            s.model = v;
        else if (k == "model_path")
            s.model_path = v;
        else if (k == "backend")
            s.backend = v;
        else if (k == "cache" && parse_cache_view(v))
            s.cache = *parse_cache_view(v);
        else if (k == "prompt")
            s.prompt = v;
        else if (k == "play_speed")
            read_number(v, s.play_speed);
        else if (k == "layer")
            read_number(v, s.layer);
        else if (k == "head")
            read_number(v, s.head);
        else if (k == "weight_scale")
            s.weight_scale = v;
        else if (k == "log_time")
            s.log_time = v == "1";
        else if (k == "temperature")
            read_number(v, s.temperature);
        else if (k == "top_k")
            read_number(v, s.top_k);
        else if (k == "top_p")
            read_number(v, s.top_p);
        else if (k == "seed")
            read_number(v, s.seed);
        else if (k == "lang" && (v == "en" || v == "zh"))
            s.lang = v;
        else if (k == "lesson")
            read_number(v, s.lesson);
        else if (k == "lesson_step")
            read_number(v, s.lesson_step);
    }
    if (!(s.font_scale >= 0.5f && s.font_scale <= 4.0f)) s.font_scale = 1.0f;
    if (!(s.play_speed > 0 && s.play_speed <= 100)) s.play_speed = 4.0f;
    if (s.layer < 0) s.layer = 0;
    if (s.head < 0) s.head = 0;
    if (s.lesson < 0 || s.lesson > 99) s.lesson = 0;
    if (s.lesson_step < 0 || s.lesson_step > 999) s.lesson_step = 0;
    return s;
}

bool save_settings(const Settings& s, const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
    const fs::path tmp = p.string() + ".tmp";
    {
        std::ofstream f(tmp);
        if (!f) return false;
        // The prompt is kept on one line: newlines inside it become spaces.
        std::string prompt = s.prompt;
        for (char& c : prompt)
            if (c == '\n' || c == '\r') c = ' ';
        f << "# kvscope settings (rewritten on exit)\n"
          << "theme = " << s.theme << "\nfont_scale = " << num(s.font_scale)
          << "\nmodel = " << s.model << "\nmodel_path = " << s.model_path
          << "\nbackend = " << s.backend << "\ncache = " << cache_view_name(s.cache)
          << "\nprompt = " << prompt << "\nplay_speed = " << num(s.play_speed)
          << "\nlayer = " << s.layer << "\nhead = " << s.head
          << "\nweight_scale = " << s.weight_scale << "\nlog_time = " << (s.log_time ? 1 : 0)
          << "\ntemperature = " << num(s.temperature) << "\ntop_k = " << s.top_k
          << "\ntop_p = " << num(s.top_p) << "\nseed = " << s.seed << "\nlang = " << s.lang
          << "\nlesson = " << s.lesson << "\nlesson_step = " << s.lesson_step << "\n";
        if (!f) return false;
    }
    fs::rename(tmp, p, ec);
    return !ec;
}

}  // namespace kvs::gui
