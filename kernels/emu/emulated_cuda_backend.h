#pragma once
// "cuda-emulated": every op runs the CUDA backend's kernels through the CPU emulator
// (emu_kernels.h), with the launch shapes the GPU would get. Memory is host memory. It exists so
// that a machine without a GPU, and a build without nvcc, still runs and tests the kernel code;
// it is far slower than the CPU backend, and its times measure the emulation, not a GPU.
//
// It mirrors the host side of the cuda backend call for call, so tests can read off it what the
// device backend would do: how many launches, copies and stream syncs (counts()), and how a device
// failure travels (inject(): errors kept and reported as kernels/cuda/fault_ledger.h says).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "core/model/fused_ops.h"
#include "core/model/step_graphs.h"
#include "kernels/cuda/fault_ledger.h"
#include "kernels/cuda/launch_shapes.h"
#include "kernels/emu/kernel_runner.h"

namespace kvs {

namespace kern {
struct AttentionPlan;  // kernels/cuda/attention_plan.h
}

// What the cuda backend would ask of the CUDA runtime, counted call by call.
struct LaunchCounts {
    int launches = 0;            // kernel launches
    int h2d = 0;                 // host-to-device copies
    int d2h = 0;                 // device-to-host copies
    std::size_t d2h_floats = 0;  // floats those copies brought back
    int d2d = 0;                 // device-to-device copies
    int syncs = 0;               // stream synchronisations (each download and upload waits once)
    int allocs = 0;              // cudaMalloc
    int frees = 0;               // cudaFree (each waits for the device)
    // CUDA Graphs (core/model/step_graphs.h): the host launches one graph; the kernels and copies
    // inside it are counted in graph_kernels and graph_copies, not in launches and d2d.
    int captures = 0;        // graphs recorded and instantiated
    int graph_launches = 0;  // cudaGraphLaunch
    int graph_kernels = 0;   // kernels those launches ran
    int graph_copies = 0;    // device-to-device copies those launches ran
};

// A failure to play at the n-th call of an op (1 = the first after inject()).
struct EmuFault {
    enum class Kind {
        Launch,   // the launch is refused at once (cudaGetLastError after it), e.g. no kernel image
        Fault,    // the kernel faults on the device: nothing says so until the next stream sync,
                  // and every later call fails with it (sticky), cudaFree included
        Release,  // cudaFree fails (with the fault already sticky, or e.g. a bad pointer)
    };
    Kind kind = Kind::Fault;
    Op op = Op::Matmul;  // which op's calls are counted (not used for Release)
    int call = 1;
    std::string error;  // empty: CUDA's words for the kind ("an illegal memory access ...")
};
// "op:call:kind" as in KVSCOPE_EMU_FAULT, e.g. "attention:3:fault", "matmul:1:launch",
// "release:1:release". Throws kvs::Error for anything else.
EmuFault parse_emu_fault(const std::string& spec);

// Graphs are modelled as CUDA records them: while capturing, each launch and copy is kept as a
// closure over its arguments by value (pointers, sizes, shapes) instead of running; a replay runs
// the closures in order. What a recorded kernel must not take by value (the step's token ids and
// positions) it reads from this backend's "device" copy of the step's scalars.
class EmulatedCudaBackend final : public Backend, public StepGraphs, public FusedOps {
  public:
    // Reads KVSCOPE_CUDA_SYNC (wait after every op) and KVSCOPE_EMU_FAULT (one inject()). The
    // kernels run on the emulator, or on the CPU shim (kernels/shim/shim_runner.h, tests only).
    explicit EmulatedCudaBackend(const KernelRunner& kernels = emulator_runner());
    std::string name() const override { return kernels_->backend_name; }
    std::string device() const override;

    void inject(const EmuFault& f);
    const LaunchCounts& counts() const { return counts_; }
    void reset_counts() { counts_ = {}; }

    DeviceSpan alloc(std::size_t n) override;
    void release(DeviceSpan s) noexcept override;
    void upload(DeviceSpan dst, const float* src, std::size_t n) override;
    void download(float* dst, DeviceSpan src, std::size_t n) override;

    void embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) override;
    void rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim, float eps) override;
    void matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) override;
    // F16 and BF16 weights, as the cuda backend: copied once into "device" memory.
    bool runs_compact(GgmlType type) const override;
    void matmul_compact(DeviceSpan out, DeviceSpan x, GgmlType type, const unsigned char* w, int T,
                        int n, int d) override;
    void embed_compact(DeviceSpan x, GgmlType type, const unsigned char* table, const int* tokens,
                       int T, int dim) override;
    const unsigned char* adopt_compact(const unsigned char* host, std::size_t bytes) override;
    void release_compact(const unsigned char* adopted) noexcept override;
    void rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim, int head_dim,
              DeviceSpan inv_freq) override;
    void kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v, int pos0,
                   int T, int kv_dim) override;
    void attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                   DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads, int head_dim,
                   bool causal) override;
    // A paged cache written and read in place: the K/V append and attention kernels through the
    // block table (kv_append.cuh, attention.cuh).
    void kv_append_paged(DeviceSpan pool_k, DeviceSpan pool_v, DeviceSpan k, DeviceSpan v, int pos0,
                         int T, int kv_dim, const BlockTable& table) override;
    bool attends_paged_in_place() const override { return true; }
    void attention_paged(DeviceSpan out, DeviceSpan q, DeviceSpan pool_k, DeviceSpan pool_v,
                         DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                         int head_dim, bool causal, const PagedKeys& keys) override;
    void swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) override;
    void layernorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, DeviceSpan b, int T, int dim,
                   float eps) override;
    void gelu(DeviceSpan h, std::size_t n) override;
    void add(DeviceSpan x, DeviceSpan y, std::size_t n) override;
    void add_bias(DeviceSpan x, DeviceSpan b, int T, int n) override;
    void copy_rows(DeviceSpan dst, std::size_t dst_stride, DeviceSpan src, std::size_t src_stride,
                   std::size_t rows, std::size_t row_len) override;

    void synchronize() override;
    OpTiming op_timing() const override { return OpTiming::Emulator; }
    std::uint64_t kernel_launches() const override {
        return std::uint64_t(counts_.launches) + std::uint64_t(counts_.graph_kernels);
    }

    StepGraphs* graphs() override { return this; }
    bool graphs_on() const override { return graphs_on_; }
    void set_graphs_on(bool on) override { graphs_on_ = on; }
    void set_step(const int* tokens, const int* positions, int n) override;
    void begin_capture() override;
    void position_of(int seq, int max_keys) override;
    int end_capture() override;
    void abort_capture() noexcept override;
    bool replay(int graph) override;
    void drop(int graph) noexcept override;
    // A broken replay on purpose, for the test that shows the graph check can fail: once a graph
    // has been recorded, set_step() leaves the device's positions as they were, so replays run
    // at the recording step's position (a stale position).
    void break_step_positions_for_test(bool on) { stale_positions_ = on; }

    // FusedOps: the fused decode kernels (kernels/cuda/fused_decode.cuh), each one launch.
    FusedOps* fused() override { return this; }
    bool fused_on() const override { return fused_on_; }
    void set_fused_on(bool on) override { fused_on_ = on; }
    bool fused_reads(GgmlType type) const override;
    bool fused_fits(int n_heads, int n_kv_heads, int head_dim) const override;
    void norm_qkv(const NormQkv& a) override;
    void attention(const Attend& a) override;
    void matvec_add(DeviceSpan x, DeviceSpan in, const FusedMatrix& w, int n, int d) override;
    void norm_gate_up(DeviceSpan h, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w1,
                      const FusedMatrix& w3, int dim, int hidden, float eps) override;
    void norm_logits(DeviceSpan logits, DeviceSpan x, DeviceSpan norm, const FusedMatrix& w,
                     int dim, int vocab, float eps) override;
    // The fused attention's tickets are all zero, as the kernel expects them at a launch.
    bool tickets_zero() const;
    // Another reduction order on purpose, for the test that shows the fused path's bit-for-bit
    // check can fail: matvec_add's lanes sum their chunks in reverse (kern::FusedMatvecAddArgs).
    void reverse_fused_sums_for_test(bool on) { reversed_sums_ = on; }
    // Block sizes of the kernels that can take others (kern::block_variants), for
    // `kvscope-cli kernels`; graphs recorded before are refused afterwards.
    void set_block_sizes(const kern::BlockSizes& b) {
        blocks_ = b;
        ++partial_epoch_;
    }

  private:
    std::vector<OpCall>* each() { return record_calls_ ? &calls_ : nullptr; }
    // One op: counts its launches (`kernels` of them), plays an injected fault, runs `kernel`
    // unless the device has faulted, and waits after it under KVSCOPE_CUDA_SYNC=1. An injected
    // fault of this very launch runs `cut` instead: what the kernel did before it faulted.
    struct NoCut {
        void operator()() const {}
    };
    template <class F, class G = NoCut>
    void launch(Op op, F&& kernel, int kernels = 1, G cut = G{});
    void wait();  // a stream sync: reports a fault the device has hit (once)

    const KernelRunner* kernels_;
    FaultLedger ledger_;
    LaunchCounts counts_;
    std::vector<EmuFault> faults_;
    std::vector<int> seen_ = std::vector<int>(kOpCount + 1, 0);  // calls per op, + releases
    int queued_ = 0;            // work queued since the last stream sync
    std::string device_fault_;  // set when an injected Fault has "happened" on the device
    // Decode attention's partial results (kern::decode_partial_floats), as the cuda backend's
    // device buffer: grown (one cudaMalloc, counted) when a longer cache needs more.
    std::vector<float> decode_partial_;
    // A paged op's block table on the "device" (an emulated launch runs before its call
    // returns, so one at a time).
    std::vector<int> paged_table_;
    const int* table_to_device(const BlockTable& table);
    // decode_partial_ grown to `need` floats (a graph recorded before is then stale).
    float* ensure_partial(std::size_t need);
    // The planned attention's kernels (prefill, or decode split and combine), its scratch first.
    void launch_attention(kern::AttentionPlan p);
    // The fused attention's tickets ([n_kv_heads], zero between launches), and the device's
    // copies of compact weights (adopt_compact).
    std::vector<int> tickets_ = std::vector<int>(kMaxKvHeads, 0);
    bool tickets_reset_ = false;  // zeroed after the fault the ledger keeps
    static constexpr int kMaxKvHeads = 1024;
    std::map<const unsigned char*, std::vector<unsigned char>> compact_;
    bool fused_on_ = true;
    bool reversed_sums_ = false;
    int capture_keys_ = 0;  // position_of's max_keys

    // Graphs. The step's scalars on the "device": [token ids | positions], kMaxSequences each,
    // allocated once so recorded kernels may point into it.
    struct Graph {
        std::vector<std::function<void()>> nodes;
        int kernels = 0, copies = 0;
        int epoch = 0;  // partial_epoch_ when recorded
    };
    bool record(std::function<void()> node, int kernels, int copies);  // true while capturing
    const int* step_position() const { return step_.data() + kMaxSequences + capture_seq_; }
    bool graphs_on_ = true;
    bool stale_positions_ = false;
    std::vector<int> step_ = std::vector<int>(2 * kMaxSequences, 0);
    bool capturing_ = false;
    int capture_seq_ = 0;
    Graph recording_;
    std::map<int, Graph> graphs_;
    int next_graph_ = 1;
    // Bumped when decode_partial_ moves (older graphs point at freed memory) or block sizes change.
    int partial_epoch_ = 0;
    kern::BlockSizes blocks_;
};

}  // namespace kvs
