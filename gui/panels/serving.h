#pragma once
// The Serving view (key V, gui/panels/serving.cpp) and what it keeps between frames: many requests
// over one paged KV cache, step by step, drawn from the engine's serving shots
// (core/serving/serve_trace.h): the block pool as a grid coloured by request, each request's block
// table, the requests' states per step, the batch's rows per step, and the memory held against
// what contiguous caches would reserve. The scheduler runs on the engine's worker thread.
#include <memory>

#include "gui/draw/frame_context.h"

namespace kvs::gui {

struct ServingPanel {
    ServeSetup setup;  // the run asked for (the controls and --serve-* change it)
    std::shared_ptr<const Model> asked_for;  // the model a run was asked for; null: none yet
    int view = -1;  // the shot shown (0: before the first step); -1: newest
    std::shared_ptr<const ServePlan> lesson;  // the lesson's @serve run shown; null: none
    ServeSetup own;  // the view's own setup, while a lesson's plan is shown
};

// A lesson's latest @serve (once its step has played) shows this view on the lesson's plan, in
// place of the view's own setup; leaving the lesson, or a lesson without one, gives the view its
// own setup back and the stage its panels. `show`: the view on the stage (key V).
void follow_lesson_serve(FrameContext& f, ServingPanel& p, bool lesson_open, bool& show);

// Asks the engine for a new run on the open model, from before its first step.
void restart_serving(FrameContext& f, ServingPanel& p);
// The view's keys while it is open: Space or Right the next step (a new one at the newest), `[`
// or Shift+Left the step before, `]` or Shift+Right the step after, Home / End, R a new run.
// True when `key` (GLFW) was the view's.
bool serving_key(FrameContext& f, ServingPanel& p, int key, int mods);
void draw_serving(FrameContext& f, ServingPanel& p);

}  // namespace kvs::gui
