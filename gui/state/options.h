#pragma once
// kvscope's command line. Interactive by default; --screenshot and --frame-stats render without
// anyone at the keyboard (for docs, tests and timing). A bad option is a kvs::Error whose
// one-line message main() prints before exiting with 2.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmdline/command_line.h"
#include "core/session/cache_view.h"

namespace kvs::gui {

// The tutorial's sentence, the toy's default prompt (its vocabulary knows few words).
inline constexpr const char* kToyPrompt = "Today weather is so";
// Inside attention's stages, as --explain-stage and --views stage=N number them from 1
// (kExplainStages of gui/views/inside_attention_text.h, which checks that they agree).
inline constexpr int kPanelStages = 14;

struct AppOptions {
    std::string model;  // empty: the settings' choice, else the default model
    std::string tokenizer;
    std::string backend;  // empty: the settings' choice, else "auto"
    int threads = 1;      // the CPU backend's threads
    int context = 0;      // tokens a session may hold (0: the model's context)
    std::optional<std::string> prompt;
    std::optional<CacheView> cache;
    bool prefill = false;
    int decode = 0;  // decode steps to run (prefill first when needed)
    // A recorded run to show instead of a model (trace JSON; core/trace_reader.h).
    std::string replay;
    // The run shown, written when the window closes (headless: after the steps above).
    std::string trace_json, trace_events;
    int width = 1280, height = 800;
    int layer = -1, head = -1;         // -1: keep the app's choice
    std::optional<std::string> theme;  // "light" | "dark"
    std::optional<float> font_scale;
    std::optional<std::string> weight_scale;  // "linear" | "sqrt" | "log"
    // The sampler (as kvscope-cli's --temperature, --top-k, --top-p, --seed).
    std::optional<float> temperature, top_p;
    std::optional<int> top_k;
    std::optional<std::uint64_t> seed;
    float zoom = 1;            // the large heatmap shows the newest n / zoom tokens
    std::string screenshot;    // write a PNG of the window and exit
    std::string layout_json;   // where each panel was drawn (headless, one frame)
    int frame_stats = 0;       // render this many frames, print frame-time statistics, exit
    bool no_settings = false;  // neither read nor write the settings file and imgui.ini
    bool help = false;
    bool version = false;
    int lesson = 0;       // open this lesson (its number) in the lesson panel
    int lesson_step = 1;  // at this step, from 1 (steps before it are played too)
    // Headless: the answer to that step's question (@ask): a choice 1-4, a number, "skip" (the
    // default) or "wait" (the question left waiting, the step not run).
    std::string answer;
    std::optional<std::string> lang;  // "en" | "zh": the window's words and the lessons
    // Headless, after the steps above, as a user would in the window: Open file... with this
    // path, then type this prompt and press Enter. Their errors show in the window.
    std::string open_file;
    std::optional<std::string> then_prompt;
    // The soak: this many decode steps, each followed by a frame, over and over from a reset
    // with a new prompt when the context is full; VmRSS printed every soak_report steps.
    int soak_steps = 0;
    int soak_report = 250;
    std::size_t trace_budget = 0;  // the window's trace budget in bytes (0: the default, 256 MiB)
    int timing_runs = 0;           // each step under 10 ms timed as the median of N runs (0: 3)
    // --explain L,H,P: open the inside-attention panel on layer L, head H, the query at position
    // P (kept as its token index, P - 1; "last": -1, the newest row); --ops: the op strip, --op
    // N: with op N highlighted.
    bool explain = false;
    int explain_layer = 0, explain_head = 0, explain_q_pos = -1;
    int explain_session = 0;  // drawn first: 0, or 1 the twin (compare, bidirectional)
    bool ops = false;
    bool ops_fast = false;      // the headless steps take the fast path even with the strip shown
    bool weight_types = false;  // the weight-types panel open (headless: measured before frames)
    int op = -1;
    // The Serving view (key V): open, its prompts file (empty: the built-in eight), block size,
    // prefix sharing, and the scheduler steps run before the first frame.
    bool serve = false;
    std::string serve_prompts;
    int serve_block_size = 4;
    bool serve_sharing = true;
    int serve_steps = 0;
    int explain_stage = -1;  // --explain-stage N: the stage shown (0-based here); -1: all at once
    std::string maximise;    // --maximise PANEL: that panel alone in the window (presenter view)
    bool presenter = false;  // --presenter: no toolbar, no title bars (F5)
    // --views "V;V;...": headless, after the frame of --layout-json, more frames each with the
    // view changed as V says (a comma list of maximise=ID, stage=N|all, presenter=0|1,
    // explain=L:H:ROW|off, mask=causal|bidirectional), each recorded to FILE-N.json (N from 1).
    std::vector<std::string> views;

    bool headless() const {
        return !screenshot.empty() || !layout_json.empty() || frame_stats > 0 || soak_steps > 0;
    }
};

// One setting of a --views entry ("KEY=VALUE"), read once: what apply_view (gui/window_main.cpp)
// does with it, as the keys would.
struct ViewSetting {
    enum class Key {
        maximise,
        stage,
        presenter,
        mask,
        lesson_off,
        explain,
        temperature,
        top_k,
        top_p
    } key = Key::maximise;
    std::string panel;                  // maximise: the panel ("" for none)
    int stage = -1;                     // stage: 0..6, -1 for all
    bool on = false;                    // presenter=1, mask=bidirectional, explain (false: off)
    int layer = 0, head = 0, row = -1;  // explain: the query's index (position - 1), -1 last
    float number = 0;                   // temperature, top-k, top-p: the control's value
};
// A --views entry's settings in order; kvs::Error "'K=V' in view 'VIEW' is not a view setting"
// (with why, for a number) for any other, so nothing is left for apply_view to misread.
std::vector<ViewSetting> read_view(const std::string& view);
// "" when `view` reads, else read_view's message.
std::string check_view(const std::string& view);

// The window's options, each with its name, help and the rule its value follows
// (cmdline/command_line.h): the command line reads them, and the settings file keeps some of them
// under the same names (gui/state/settings.h).
std::vector<cmdline::OptionSpec> window_options();

AppOptions parse_options(int argc, char** argv);
std::string usage();

}  // namespace kvs::gui
