#include "gui/state/shortcuts.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "gui/state/strings.h"

namespace kvs::gui {
namespace {

using A = KeyAction;
using M = KeyMods;

KeyBinding key(int k, M mods, A action) {
    return {k, mods, action, nullptr, false};
}
KeyBinding typing_key(int k, M mods, A action) {
    return {k, mods, action, nullptr, true};
}
KeyBinding maximise_key(int k, const char* panel) {
    return {k, M::None, A::Maximise, panel, false};
}

bool mods_match(M want, int mods) {
    const bool ctrl = mods & GLFW_MOD_CONTROL;
    const bool some = mods & (GLFW_MOD_SHIFT | GLFW_MOD_CONTROL | GLFW_MOD_ALT);
    switch (want) {
        case M::Any:
            return true;
        case M::None:
            return !some;
        case M::Some:
            return some;
        case M::NoCtrl:
            return !ctrl;
        case M::Ctrl:
            return ctrl;
    }
    return false;
}

}  // namespace

const std::vector<Shortcut>& shortcuts() {
    // Labels without words ("P", "Home / End") go through tr() too, and come back as they are.
    static const std::vector<Shortcut> table = {
        {tr_later("Space or Right"),
         tr_later("step: prefill first, then one decode token"),
         {key(GLFW_KEY_SPACE, M::None, A::Step), key(GLFW_KEY_RIGHT, M::None, A::Step)}},
        {"P",
         tr_later("play / pause (speed slider in the toolbar)"),
         {key(GLFW_KEY_P, M::NoCtrl, A::Play)}},
        {"R", tr_later("reset to the prompt"), {key(GLFW_KEY_R, M::NoCtrl, A::Reset)}},
        {"C",
         tr_later("cache mode: on, off, compare both"),
         {key(GLFW_KEY_C, M::NoCtrl, A::CycleCache)}},
        {tr_later("[ and ]  or Shift+Left/Right"),
         tr_later("scrub back / forward through the steps"),
         {key(GLFW_KEY_LEFT_BRACKET, M::Any, A::ScrubBack),
          key(GLFW_KEY_RIGHT_BRACKET, M::Any, A::ScrubForward),
          key(GLFW_KEY_LEFT, M::Some, A::ScrubBack),
          key(GLFW_KEY_RIGHT, M::Some, A::ScrubForward)}},
        {"Home / End",
         tr_later("first step / newest step"),
         {key(GLFW_KEY_HOME, M::Any, A::FirstStep), key(GLFW_KEY_END, M::Any, A::NewestStep)}},
        {tr_later("+ and -"),
         tr_later("text size"),
         {key(GLFW_KEY_EQUAL, M::Any, A::TextLarger), key(GLFW_KEY_KP_ADD, M::Any, A::TextLarger),
          key(GLFW_KEY_MINUS, M::Any, A::TextSmaller),
          key(GLFW_KEY_KP_SUBTRACT, M::Any, A::TextSmaller)}},
        {"T", tr_later("light / dark theme"), {key(GLFW_KEY_T, M::NoCtrl, A::Theme)}},
        {"F", tr_later("full screen"), {key(GLFW_KEY_F, M::NoCtrl, A::FullScreen)}},
        {tr_later("1 to 9"),
         tr_later("a panel alone in the window: 1 tokens, 2 attention, 3 KV cache, 4 "
                  "time, 5 next token, 6 toy table, 7 lesson, 8 inside attention, 9 "
                  "op strip (again, 0 or Esc: back)"),
         {maximise_key(GLFW_KEY_1, "tokens"), maximise_key(GLFW_KEY_2, "attention"),
          maximise_key(GLFW_KEY_3, "kv"), maximise_key(GLFW_KEY_4, "time"),
          maximise_key(GLFW_KEY_5, "next"), maximise_key(GLFW_KEY_6, "toy"),
          maximise_key(GLFW_KEY_7, "lesson"), maximise_key(GLFW_KEY_8, "inside"),
          maximise_key(GLFW_KEY_9, "ops"), key(GLFW_KEY_0, M::Any, A::Restore)}},
        {tr_later("double-click a title"), tr_later("maximise that panel / restore"), {}},
        {"F5",
         tr_later("presenter mode: hide the toolbar and the titles (F5 or Esc: back)"),
         {typing_key(GLFW_KEY_F5, M::Any, A::Presenter)}},
        {"Ctrl+S",
         tr_later("save a PNG of the window (current folder)"),
         {typing_key(GLFW_KEY_S, M::Ctrl, A::Screenshot)}},
        {"Ctrl+E",
         tr_later("export the run: attention and steps as CSV, trace JSON, trace events "
                  "(current folder)"),
         {typing_key(GLFW_KEY_E, M::Ctrl, A::Export)}},
        {"L", tr_later("show / hide the lesson"), {key(GLFW_KEY_L, M::NoCtrl, A::Lesson)}},
        {tr_later("N or Page Down"),
         tr_later("lesson: next step (runs its actions)"),
         {key(GLFW_KEY_N, M::None, A::LessonNext), key(GLFW_KEY_PAGE_DOWN, M::Any, A::LessonNext)}},
        {tr_later("B or Page Up"),
         tr_later("lesson: step back (replays the steps before it)"),
         {key(GLFW_KEY_B, M::None, A::LessonBack), key(GLFW_KEY_PAGE_UP, M::Any, A::LessonBack)}},
        // The lesson panel's own keys while its question waits (gui/panels/lesson_question.cpp).
        {tr_later("1 to 4, digits, Enter"),
         tr_later("lesson: answer the step's question before it runs (then see the engine's "
                  "answer)"),
         {}},
        {"I",
         tr_later("inside attention: q·Kᵀ, √d_k, mask, softmax, ×V for one row (click a "
                  "heatmap row)"),
         {key(GLFW_KEY_I, M::NoCtrl, A::Inside)}},
        {tr_later("Up / Down"),
         tr_later("inside attention: the query row above / below"),
         {key(GLFW_KEY_UP, M::None, A::InsideRowUp),
          key(GLFW_KEY_DOWN, M::None, A::InsideRowDown)}},
        {tr_later("S / Shift+S"),
         tr_later("inside attention: the next / previous stage of the row (x, norm, "
                  "x·W_q, x·W_k, x·W_v, RoPE, the cache; q and K, q·k, ×1/√d_k, mask, "
                  "softmax, ×V, output; then all)"),
         {key(GLFW_KEY_S, M::NoCtrl, A::InsideStage)}},
        {"A",
         tr_later("inside attention: play the stages one after another"),
         {key(GLFW_KEY_A, M::NoCtrl, A::InsidePlay)}},
        {"M",
         tr_later("causal vs bidirectional: the same model without its causal mask beside it"),
         {key(GLFW_KEY_M, M::NoCtrl, A::Bidirectional)}},
        {"O",
         tr_later("op strip: every op of the step with shapes, FLOPs, time"),
         {key(GLFW_KEY_O, M::NoCtrl, A::OpStrip)}},
        {tr_later(", and ."),
         tr_later("op strip: previous / next op (the panel follows its layer)"),
         {key(GLFW_KEY_COMMA, M::NoCtrl, A::OpBack), key(GLFW_KEY_PERIOD, M::NoCtrl, A::OpNext)}},
        {"Y",
         tr_later("map of the step: every layer as a column, the K/V rows read and written and "
                  "the queries needed, with and without the cache, alone in the window (click a "
                  "layer: inside attention there)"),
         {maximise_key(GLFW_KEY_Y, "map")}},
        {tr_later("E / Shift+E"),
         tr_later("sampling: temperature up / down by 0.1 (the Next token panel reshapes at "
                  "once)"),
         {key(GLFW_KEY_E, M::NoCtrl, A::Temperature)}},
        {tr_later("K / Shift+K"),
         tr_later("sampling: top-k one more / one fewer (0: off)"),
         {key(GLFW_KEY_K, M::NoCtrl, A::TopK)}},
        {tr_later("U / Shift+U"),
         tr_later("sampling: top-p up / down by 0.05 (0 or 1: off)"),
         {key(GLFW_KEY_U, M::NoCtrl, A::TopP)}},
        {"W",
         tr_later("weight types: bytes per token and decode speed in f32, f16, q8_0 and q4_K, "
                  "measured"),
         {key(GLFW_KEY_W, M::NoCtrl, A::WeightTypes)}},
        // While the Serving view is shown it takes the stage's keys (gui/panels/serving.cpp).
        {"V",
         tr_later("serving: many requests over one paged KV cache, step by step (Right: next "
                  "step, [: back, R: start again)"),
         {key(GLFW_KEY_V, M::NoCtrl, A::Serving)}},
        {tr_later("F1 or Esc"),
         tr_later("this help"),
         {typing_key(GLFW_KEY_F1, M::Any, A::Help), key(GLFW_KEY_ESCAPE, M::Any, A::Back)}},
    };
    return table;
}

const KeyBinding* binding_for(int key, int mods, bool typing) {
    for (const Shortcut& s : shortcuts())
        for (const KeyBinding& b : s.bindings)
            if (b.key == key && (b.while_typing || !typing) && mods_match(b.mods, mods)) return &b;
    return nullptr;
}

std::string shortcuts_markdown() {
    std::string out = "| keys | what they do |\n| --- | --- |\n";
    for (const Shortcut& s : shortcuts())
        out += std::string("| ") + s.keys + " | " + s.what + " |\n";
    return out;
}

}  // namespace kvs::gui
