#include "gui/app/soak.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "gui/app/app.h"

namespace kvs::gui {
namespace {

// Prompts that every model reads: the toy knows only its own words.
const std::vector<std::string>& prompts(bool toy) {
    static const std::vector<std::string> words = {"Today weather is so", "Today is so",
                                                   "weather is so", "Today weather is"};
    static const std::vector<std::string> text = {
        "Once upon a time", "One day Lily went to the park", "Tom had a red ball",
        "The little dog was happy because"};
    return toy ? words : text;
}

struct State {
    int steps = 0;  // trace length of the first session
    bool finished = false;
    int context = 0;
    bool toy = false;
    std::string error;
    std::uint64_t error_serial = 0;
    double payload = 0, budget = 0;  // the window's traces, all sessions
    int evicted = 0;                 // steps whose payloads were dropped to keep to the budget
};

State state(EngineWorker& w) {
    auto lock = w.lock();
    const EngineSnapshot& s = w.snapshot();
    State st;
    st.steps = s.steps();
    st.finished = s.finished();
    st.context = s.model ? s.model->config().seq_len : 0;
    st.toy = s.model && s.model->is_toy();
    st.error = s.error;
    st.error_serial = s.error_serial;
    for (const auto& v : s.sessions) {
        st.payload += static_cast<double>(v.trace.payload_bytes());
        st.budget += static_cast<double>(v.trace.budget());
        st.evicted += v.trace.evicted_steps();
    }
    return st;
}

double mib(double b) {
    return b / (1024.0 * 1024.0);
}

}  // namespace

double resident_bytes() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;  // kB
    return 0;
}

int run_soak(App& app, EngineWorker& worker, int steps, int report) {
    const State first = state(worker);
    if (first.context == 0) throw Error("the soak needs a model");
    const auto& ps = prompts(first.toy);
    int done = 0, cycle = 0;
    std::vector<double> after_first_cycle;  // RSS samples once every size has been reached
    double first_rss = 0;
    while (done < steps) {
        worker.set_prompt(ps[cycle % ps.size()]);  // resets: a new trace from step 0
        worker.wait_idle();
        State st = state(worker);
        if (st.error_serial != first.error_serial) throw Error(st.error);
        while (done < steps && !st.finished) {
            const int before = st.steps;
            worker.decode(1);  // the prefill comes first, in the same request
            worker.wait_idle();
            glfwPollEvents();
            app.frame();
            st = state(worker);
            if (st.error_serial != first.error_serial) throw Error(st.error);
            const int decoded = st.steps - before - (before == 0 ? 1 : 0);
            if (decoded <= 0 && !st.finished) throw Error("the soak made no progress");
            for (int k = 0; k < decoded && done < steps; ++k)
                if (++done % report == 0) {
                    const double rss = resident_bytes();
                    if (first_rss == 0) first_rss = rss;
                    if (cycle >= 1) after_first_cycle.push_back(rss);
                    std::printf(
                        "soak: %d decode steps, run %d at step %d, VmRSS %.1f MiB; trace "
                        "payloads %.1f of %.0f MiB, %d steps dropped\n",
                        done, cycle + 1, st.steps - 1, mib(rss), mib(st.payload), mib(st.budget),
                        st.evicted);
                    std::fflush(stdout);
                }
        }
        ++cycle;
    }
    const double end_rss = resident_bytes();
    std::printf(
        "soak: %d decode steps in %d runs, each to the end token or the context (%d tokens)\n",
        done, cycle, first.context);
    if (!after_first_cycle.empty()) {
        const auto [lo, hi] =
            std::minmax_element(after_first_cycle.begin(), after_first_cycle.end());
        std::printf(
            "soak: VmRSS after the first run: min %.1f MiB, max %.1f MiB (spread %.1f MiB); "
            "end %.1f MiB\n",
            mib(*lo), mib(*hi), mib(*hi - *lo), mib(end_rss));
    } else {
        std::printf("soak: VmRSS at the end %.1f MiB (no sample after the first run)\n",
                    mib(end_rss));
    }
    return 0;
}

}  // namespace kvs::gui
