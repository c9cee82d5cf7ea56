// What the stepping keys and buttons do: a step, the prefill, a reset, the cache view, the prompt,
// the language.
#include "gui/actions/actions.h"

#include <imgui.h>

#include <cstdio>

#include "gui/state/strings.h"
#include "gui/views/engine_words.h"

namespace kvs::gui {

void request_step(FrameContext& f) {
    if (f.snap.busy) return;
    if (f.snap.finished()) {
        char b[160];
        std::snprintf(b, sizeof b, tr("generation has finished (%s): press R to reset"),
                      finish_reason_text(f.snap.sessions[0].finish_reason));
        f.ui.notice = b;
        f.ui.notice_until = ImGui::GetTime() + 3;
        f.ui.playing = false;
        return;
    }
    f.ui.view_step = -1;
    if (f.snap.steps() == 0)
        f.worker.prefill();  // the first step is always the prefill
    else
        f.worker.decode(1);
}

void request_prefill(FrameContext& f) {
    if (f.snap.busy) return;
    f.ui.view_step = -1;
    f.worker.prefill();
}

void request_reset(FrameContext& f) {
    f.worker.cancel();
    f.ui.playing = false;
    f.ui.view_step = -1;
    f.worker.reset();
}

void cycle_cache(FrameContext& f) {
    // C cycles the cache's own views; the bidirectional view has its key (M) and goes back on.
    const CacheView next = f.snap.cache == CacheView::On    ? CacheView::Off
                           : f.snap.cache == CacheView::Off ? CacheView::Compare
                                                            : CacheView::On;
    f.ui.settings.cache = next;
    f.worker.set_cache(next);
}

void toggle_bidirectional(FrameContext& f) {
    const CacheView next =
        f.snap.cache == CacheView::Bidirectional ? CacheView::On : CacheView::Bidirectional;
    f.ui.settings.cache = next;
    f.worker.set_cache(next);
}

void apply_prompt(FrameContext& f) {
    f.ui.settings.prompt = f.ui.prompt;
    f.ui.prompt_dirty = false;
    f.ui.playing = false;
    f.ui.view_step = -1;
    f.worker.set_prompt(f.ui.prompt);
}

void set_ui_language(UiState& ui, const std::string& code) {
    // The lesson panel's prose is keyed by the language too: it is parsed again.
    ui.settings.lang = code == "zh" ? "zh" : "en";
}

}  // namespace kvs::gui
