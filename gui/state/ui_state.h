#pragma once
// What the window remembers between frames and several places share: the remembered settings
// (text size, language, theme, ...), the step shown and play, which panels are shown, the text
// fields that actions outside their panels fill, and the messages under the toolbar. A panel's
// own state between frames is a struct beside it (gui/panels/*.h: the lesson open is
// panels/lesson.h's LessonUi, the row Inside attention shows panels/inside_attention.h's
// ExplainUi), owned by the App; the engine's state lives in the snapshot.
#include <string>
#include <vector>

#include "gui/state/settings.h"
#include "gui/state/strings.h"

namespace kvs::gui {

struct UiState {
    Settings settings;
    int view_step = -1;  // the step shown; -1 follows the newest
    bool playing = false;
    bool show_help = false;
    bool show_lesson = false;        // the lesson panel: a column at the right
    bool show_weight_types = false;  // the weight-types panel (key W)
    bool show_serving = false;       // the Serving view in place of the stage (key V)
    // The text fields' contents (imgui_stdlib's InputText grows them: no length limit): the
    // prompt (the tokens panel's field; a model, a lesson or a replay sets it too) and the
    // toolbar's file path (Open file..., a file dropped on the window, --open).
    std::string prompt;
    std::string model_path;
    bool prompt_dirty = false;
    std::string notice;  // a short message under the toolbar, e.g. where a screenshot went
    double notice_until = 0;
    std::string font_notice;
    double font_notice_until = 0;
    double error_until = 0;  // the engine's last error shows until then
    Lang lang = Lang::En;    // the language in use: settings.lang when its font is there
    // The stage: a panel shown alone (its id; empty: none), presenter mode (no toolbar, no
    // title bars), and the tab chosen in each tab group, newest first.
    std::string maximised;
    bool presenter = false;
    std::vector<std::string> chosen_tabs;
    // The compact toolbar (large text on a small window: one row of stepping) opened in full.
    bool toolbar_more = false;
};

}  // namespace kvs::gui
