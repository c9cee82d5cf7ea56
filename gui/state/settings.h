#pragma once
// What kvscope remembers between runs, in a small `name = value` file beside ImGui's own ini,
// named and checked as the window's command line names and checks them:
//   $KVSCOPE_CONFIG_DIR, else $XDG_CONFIG_HOME/kvscope, else ~/.config/kvscope.
// Tests point KVSCOPE_CONFIG_DIR at a temporary folder or pass --no-settings, so they never
// touch a user's files.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/command_line.h"
#include "core/session/cache_view.h"

namespace kvs::gui {

struct Settings {
    std::string theme = "dark";  // "dark" | "light"
    float font_scale = 1.0f;
    std::string model = "default";  // a name, or "file" for model_path
    std::string model_path;
    std::string backend = "auto";
    CacheView cache = CacheView::On;
    std::string prompt = "Once upon a time";
    float play_speed = 4.0f;  // steps per second
    int layer = 0, head = 0;
    std::string weight_scale = "sqrt";
    bool log_time =
        false;  // the Time panel's plots all on a log scale (else each as its data asks)
    float temperature = 0.0f;
    int top_k = 0;
    float top_p = 0.9f;
    std::uint64_t seed = 42;
    std::string lang = "en";  // the window's words and the lessons: "en" | "zh"
    int lesson = 0;           // the lesson open in the lesson panel (its NN); 0: the panel is shut
    int lesson_step = 0;      // its step shown, from 0

    bool operator==(const Settings&) const = default;
};

// The folder; empty when neither variable nor HOME is set.
std::string settings_dir();
// The options the settings file keeps, one `name = value` line each: the window's own options
// under their names (gui/state/options.h: theme, font-scale, model, backend, cache, prompt, layer,
// head, weight-scale, temperature, top-k, top-p, seed, lang, lesson, lesson-step) and three that
// no option sets (model-path: Open file's field; play-speed; log-time: the time plot's scale),
// each with the rule its value follows.
std::vector<cmdline::OptionSpec> settings_options();
// Reads settings from `text` (the file `name`), line by line: each value is checked by its
// option's rule, as the command line checks it; a value the rule refuses (temperature -5, backend
// "quantum", top-p 2, ...) or an unavailable "cuda" is not used, the field keeps its default,
// and one line naming the file, line, key and why goes to `problems`. Unknown keys are ignored
// (a newer kvscope may write more). The older file (keys spelt font_scale, lesson_step from 0,
// model = file beside model_path) is read too.
Settings parse_settings(std::string_view text, const std::string& name,
                        std::vector<std::string>* problems);
// Reads `path` (at most 64 KiB); a missing file gives the defaults.
Settings load_settings(const std::string& path, std::vector<std::string>* problems = nullptr);
// The file's text for `s` (what save_settings writes).
std::string settings_text(const Settings& s);
// Writes `path` (creating its folder) through core/output_file (a temporary file and a rename,
// so a crash leaves the old one). Returns "" or why it could not.
std::string save_settings(const Settings& s, const std::string& path);

}  // namespace kvs::gui
