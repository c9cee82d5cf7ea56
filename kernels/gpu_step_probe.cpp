#include "kernels/gpu_step_probe.h"

#include <algorithm>

#include "core/model/model.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"
#include "kernels/emu/emulated_cuda_backend.h"

namespace kvs {
namespace {

// A session that decodes greedily past the end token, one timing run per step unless `timed`.
SessionConfig probe_config(bool op_log, bool timed, int steps) {
    SessionConfig c;
    c.capture.op_log = op_log;
    c.stop_at_end_token = false;
    c.max_new_tokens = steps + 1;
    if (!timed) c.timing.runs = 1;
    return c;
}

int room_for(const Model& m, const std::vector<int>& prompt, int steps) {
    return std::max(0, std::min(steps, m.config().seq_len - static_cast<int>(prompt.size()) - 1));
}

double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median forward time of `steps` cached decode steps on `be` (and of their graph replays,
// where the backend records graphs).
void time_decode(const Model& m, Backend& be, const std::vector<int>& prompt, int steps,
                 double& seconds, double* graph_seconds) {
    Session s(m, be, probe_config(true, true, steps));
    s.set_prompt_tokens(prompt);
    s.step();
    std::vector<double> t, g;
    for (int i = 0; i < steps && !s.finished(); ++i) {
        const StepRecord& r = s.step();
        t.push_back(r.forward_seconds);
        if (r.graph_seconds > 0) g.push_back(r.graph_seconds);
    }
    seconds = median(t);
    if (graph_seconds) *graph_seconds = median(g);
}

}  // namespace

GpuStepView probe_gpu_step(const Model& model, const std::vector<int>& prompt, int steps) {
    if (model.is_toy()) throw Error("@gpu: the toy runs on the host, not as kernels; load a model");
    GpuStepView v;
    v.prefill_rows = static_cast<int>(prompt.size());
    const int room = room_for(model, prompt, steps);
    if (room < 2) throw Error("@gpu: the prompt leaves no room in the context for decode steps");
    {
        // Op by op (graphs off): the prefill, a first decode step that sizes the decode buffers,
        // then the step counted.
        EmulatedCudaBackend be;
        be.set_graphs_on(false);
        Session s(model, be, probe_config(true, false, 2));
        s.set_prompt_tokens(prompt);
        be.reset_counts();
        s.step();
        v.prefill_launches = be.counts().launches;
        s.step();
        be.reset_counts();
        s.step();
        const LaunchCounts& c = be.counts();
        v.decode_launches = c.launches;
        v.decode_syncs = c.syncs;
        v.decode_copies = c.h2d + c.d2h;
    }
    {
        // As a CUDA Graph: with per-op timing off the runner records the step once and replays it.
        EmulatedCudaBackend be;
        Session s(model, be, probe_config(false, false, 2));
        s.set_prompt_tokens(prompt);
        s.step();
        s.step();
        be.reset_counts();
        s.step();
        v.graph_launches = be.counts().graph_launches;
        v.graph_kernels = be.counts().graph_kernels;
    }
    v.steps = room;
    BackendChoice cpu = make_backend("cpu");
    v.cpu = cpu.backend->device();
    time_decode(model, *cpu.backend, prompt, room, v.cpu_seconds, nullptr);
    v.no_device = cuda_unavailable_reason();
    if (v.no_device.empty()) {
        BackendChoice gpu = make_backend("cuda");
        v.device = gpu.backend->device();
        time_decode(model, *gpu.backend, prompt, room, v.device_seconds, &v.graph_seconds);
    }
    return v;
}

}  // namespace kvs
