#pragma once
// CUDA Graphs for decode steps (docs/cuda.md). A backend that offers them (Backend::graphs())
// records the kernel launches and device copies of one decode pass once and replays the recording
// at every token: one graph launch instead of one host launch per kernel. A recorded launch keeps
// its arguments by value, so what changes from token to token (each sequence's token id and
// position) goes through device memory instead: set_step() writes it, one host-to-device copy,
// before each replay, and the recorded kernels read it there (kern::at_step_position).
//
// The runner (core/model/transformer_runner_graph.cpp, TransformerRunner::run_graph) decides
// whether its graph still fits the pass (batch, slots, captures, its own buffers) and captures
// again when not; the backend refuses (replay() == false) a graph whose device buffers it has
// itself moved since.
namespace kvs {

class StepGraphs {
  public:
    virtual ~StepGraphs() = default;
    static constexpr int kMaxSequences = 64;  // the most sequences one step's scalars hold

    // Off: every pass issues its ops one by one (KVSCOPE_CUDA_GRAPHS=0 starts a backend off).
    virtual bool graphs_on() const = 0;
    virtual void set_graphs_on(bool on) = 0;

    // Sequence i's token id and position (i < n <= kMaxSequences) for the next capture or
    // replay: one copy to the device. (Pointers, not std::span: nvcc builds C++17.)
    virtual void set_step(const int* tokens, const int* positions, int n) = 0;
    // From begin_capture to end_capture the ops are recorded, not run. While recording, embed
    // reads the token ids from the step; rope, kv_append and attention (and the fused kernels,
    // core/model/fused_ops.h) read the position of the sequence named by position_of(), whose
    // replays see at most max_keys keys (the attention grid is sized for them); attention's
    // probs rows are probs.size / n_heads floats apart, a stride fixed at the recording, so they
    // do not move with the position.
    virtual void begin_capture() = 0;
    virtual void position_of(int seq, int max_keys) = 0;
    virtual int end_capture() = 0;  // the graph's id (> 0)
    virtual void abort_capture() noexcept = 0;
    // One graph launch of a recorded pass; false, and nothing launched, when the graph is gone
    // or a buffer it uses has moved.
    virtual bool replay(int graph) = 0;
    virtual void drop(int graph) noexcept = 0;
};

}  // namespace kvs
