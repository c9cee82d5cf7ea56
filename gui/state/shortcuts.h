#pragma once
// Every key of the window in one table: the key handler (gui/app/app.cpp) finds what a press does
// here, the help overlay (F1, gui/panels/help.cpp) lists its rows, and docs/window.md's key table
// is checked against it (test_gui_views). A panel that takes keys of its own while it asks for
// them (a lesson's question, the Serving view) is handed them first and says so in its row.
#include <string>
#include <vector>

namespace kvs::gui {

enum class KeyAction {
    Step,           // the prefill first, then one decode step
    Play,           // play / pause
    Reset,          // back to the prompt
    CycleCache,     // cache on, off, compare
    ScrubBack,      // the step before the one shown
    ScrubForward,   // the step after it
    FirstStep,      // step 0
    NewestStep,     // follow the newest step
    TextLarger,     // text size + 1/8
    TextSmaller,    // text size - 1/8
    Theme,          // light / dark
    FullScreen,     // the window full screen / back
    Maximise,       // `panel` alone in the window, or back
    Restore,        // the stage back
    Presenter,      // presenter mode on / off
    Screenshot,     // a PNG of the window after this frame
    Export,         // the run shown as CSV, trace JSON and trace events
    Lesson,         // the lesson panel open / closed
    LessonNext,     // the lesson's next step
    LessonBack,     // the step before
    Inside,         // Inside attention open / closed
    InsideRowUp,    // its query row above
    InsideRowDown,  // its query row below
    InsideStage,    // its next stage (Shift: the one before)
    InsidePlay,     // its stages played one after another
    Bidirectional,  // causal vs bidirectional beside it
    OpStrip,        // the op strip open / closed
    OpBack,         // the op before
    OpNext,         // the op after
    Temperature,    // the sampler's temperature + 0.1 (Shift: - 0.1)
    TopK,           // its top-k + 1 (Shift: - 1)
    TopP,           // its top-p + 0.05 (Shift: - 0.05)
    WeightTypes,    // the weight-types panel open / closed
    Serving,        // the Serving view in place of the stage, or back
    Help,           // this table as an overlay
    Back,           // Esc: the help, the Serving view, a panel alone, presenter mode, in that order
};

// Which of Shift, Ctrl and Alt a binding takes.
enum class KeyMods {
    Any,     // whatever is held
    None,    // none of them
    Some,    // at least one of them
    NoCtrl,  // anything but Ctrl (Ctrl+letter is not the letter's shortcut)
    Ctrl,    // Ctrl, with or without the others
};

struct KeyBinding {
    int key = 0;  // GLFW_KEY_*
    KeyMods mods = KeyMods::Any;
    KeyAction action = KeyAction::Step;
    const char* panel = nullptr;  // Maximise: the panel's id ("tokens", "attention", ...)
    bool while_typing = false;    // also while a text field has the focus
};

// One row of the help: the keys as written and what they do, in English (tr() gives the window's
// language), and the presses that do it (none: the mouse, or a panel's own keys).
struct Shortcut {
    const char* keys;
    const char* what;
    std::vector<KeyBinding> bindings;
};

const std::vector<Shortcut>& shortcuts();

// The first binding a press of `key` with GLFW modifier bits `mods` matches, or null. `typing`:
// a text field has the focus, so only bindings marked while_typing count.
const KeyBinding* binding_for(int key, int mods, bool typing);

// The table as docs/window.md writes it: "| keys | what they do |" rows, English.
std::string shortcuts_markdown();

}  // namespace kvs::gui
