#pragma once
// The weight-types panel (key W, gui/panels/weight_types.cpp) and what it keeps between frames:
// one measurement of the loaded model's weights in other types, run on a thread of its own while
// the window keeps drawing (on the page in one go: no threads there).
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gui/draw/frame_context.h"
#include "lessonlib/weight_types.h"

namespace kvs::gui {

struct WeightTypesPanel {
    std::shared_ptr<const Model> model;  // the model measured
    std::mutex mutex;                    // guards rows, read_bw, error
    std::vector<WeightTypeRun> rows;
    double read_bw = 0;  // GB/s, best of 3 (bench --limits' probe, 1 thread)
    std::string error;
    std::atomic<bool> running{false}, cancel{false};
    std::thread thread;

    // Measures `m` from the start (a measurement running is stopped first); `wait`: returns
    // when it is done.
    void measure(const std::shared_ptr<const Model>& m, bool wait);
    void stop();
    ~WeightTypesPanel() { stop(); }

  private:
    void run();
};

void draw_weight_types(FrameContext& f, WeightTypesPanel& panel);

}  // namespace kvs::gui
