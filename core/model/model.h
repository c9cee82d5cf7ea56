#pragma once
// A Model is immutable (shapes, weights, tokenizer); a Runner is one sequence being computed on a
// backend, with its KV cache. Session drives a Runner; the Llama model and the tutorials' toy
// model both implement these, so every view works on both.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/model/attention_mask.h"
#include "core/model/attention_rows.h"
#include "core/model/counts.h"
#include "core/model/kv_cache.h"
#include "core/model/model_config.h"
#include "core/model/op_log.h"
#include "core/tokenizers/tokenizer.h"
#include "core/util/error.h"

namespace kvs {

class Backend;

// What the trace wants back from a forward pass.
struct Capture {
    bool attention = true;  // attention weights of the kept rows
    bool kv_rows = true;    // the K and V rows written, for the KV cache view
    int last_rows = -1;     // keep only the last n query rows (-1: all)
    // q (after RoPE) and the attention output of the kept rows, every layer: the inputs of
    // core/session/attention_explain.h. [n_layers, kept rows, n_heads * head_dim] each.
    bool vectors = true;
    // Every K/V row the pass wrote, not only the kept rows' (uncached decode: compared with the
    // rows the cache held before the step emptied it).
    bool all_kv_rows = false;
    bool op_log = true;  // every op of the pass with shapes, counted FLOPs and its call's time
    // With op_log, every op issued as its own kernel(s) and timed: the teaching path. False (or
    // no op_log): the pass runs as fast as the backend can (a cached decode step through its
    // fused kernels, or its op-by-op kernels as one CUDA graph), and op_log lists the ops grouped
    // by the kernel they ran in, timed kernel by kernel where they were not in a graph.
    bool time_each_op = true;
    // A pass not timed op by op: through the backend's fused decode kernels where it has them
    // (core/model/fused_ops.h); false: its op-by-op kernels (one CUDA graph where it has graphs).
    bool fused = true;
    // Where the kept rows' q, k and v came from, every layer (core/model/projection_rows.h): the
    // layer's input, the norm's output, q and k before RoPE, v, k after RoPE. Asked for by what
    // shows them (explain, a full trace): on a GPU it costs 6 device copies a layer per pass. A
    // pass through the fused decode kernels keeps none (they write only what `vectors` asks for).
    // (Last, so the captures spelt out position by position keep their meaning.)
    bool projections = false;
};

// How a forward pass ran: each op issued as its own kernel(s) (op by op), those kernels replayed
// as one CUDA graph (graph), or the fused decode kernels, one graph where the backend has graphs
// (fused). A CPU pass is op by op.
enum class PassPath { PerOp, Graph, Fused };
const char* pass_path_name(PassPath p);  // "op by op", "graph", "fused"

struct ForwardResult {
    std::vector<float> logits;  // [vocab] at the last position
    AttentionRows attention;    // kept rows, every layer and head
    int kv_rows_kept = 0;
    std::vector<float> kv_rows;  // [n_layers, 2 (K, V), kv_rows_kept, kv_dim]
    // Capture::vectors: [n_layers, kept rows, n_heads * head_dim]; empty for the toy (no q).
    std::vector<float> q_rows;    // q after RoPE, as the attention kernel read it
    std::vector<float> attn_out;  // attention output (heads concatenated), before wo
    // Capture::projections: [n_layers, kept rows, 3 dim + 3 kv_dim] (core/model/projection_rows.h);
    // empty for the toy and for a pass through the fused decode kernels.
    std::vector<float> projections;
    // Capture::op_log: the ops in the order they ran (times filled in by Session, once the
    // backend has synchronized). A batched pass logs into out[0], for all its sequences.
    OpLog ops;
    // A scalar per head for the kept rows, for models whose heads output scalars (the toy):
    // [n_layers, n_heads, rows]; empty otherwise.
    std::vector<float> head_outputs;
    PassPath path = PassPath::PerOp;  // how the pass ran its kernels
};

class Runner {
  public:
    virtual ~Runner() = default;
    // Tokens at positions kv().len.., appended to the cache; logits for the last one.
    // Throws kvs::Error when the cache has no room for them.
    virtual void forward(std::span<const int> tokens, const Capture& want, ForwardResult& out) = 0;
    virtual void reset() = 0;  // empty the cache
    // Forget the cache rows from `len` on (0 <= len <= kv().len): the state before the steps
    // that wrote them, so a step can be re-run from the same state to time it again.
    virtual void truncate(int len) = 0;
    virtual KvShape kv() const = 0;
    virtual std::string backend_name() const = 0;
    virtual std::string device() const = 0;
    virtual Backend* backend() { return nullptr; }
    // The mask of the passes from now on (core/model/attention_mask.h). A model whose heads cannot
    // attend without it (the toy's rules) refuses Bidirectional with a kvs::Error.
    virtual void set_mask(AttentionMask m) {
        if (m != AttentionMask::Causal)
            throw Error("this model's attention cannot run without the causal mask");
    }
    // Whether a cached decode step, with per-op timing off, runs as a recorded CUDA Graph on
    // this runner's backend (core/model/step_graphs.h): the backend offers graphs and the model's
    // pass can be recorded (a GPT-2 step cannot: it runs op by op).
    virtual bool records_graphs() const { return false; }
    // Whether a cached decode step, with per-op timing off, runs through the backend's fused
    // decode kernels (core/model/fused_ops.h) on this runner.
    virtual bool runs_fused() const { return false; }
    // K/V rows first..first+n-1 the cache holds now: out [n_layers, 2 (K, V), n, kv_dim].
    virtual void read_kv_rows(int first, int n, std::vector<float>& out) = 0;
};

// One sequence's share of a batched forward pass: its KV cache slot and its new tokens.
struct SeqInput {
    int slot = 0;
    std::span<const int> tokens;
};

// A runner for up to max_batch() sequences, each with its own KV cache. forward_batch stacks
// the sequences' rows for the dense ops (norms, matmuls, FFN: [sum of T, dim]), which is where
// batching pays; RoPE, the cache append and attention stay per sequence.
// Where a bounded cache's attention sinks sit for RoPE. Cache: as StreamingLLM numbers them,
// by their place in the cache, so they sit just before the window's rows (keys rotated as if the
// cache were the whole text); a query is then never farther from a key than the cache is long,
// whatever its position. Original: at the positions their tokens had, ever farther behind the
// window as the text grows.
enum class SinkPositions { Cache, Original };
inline const char* sink_positions_name(SinkPositions p) {
    return p == SinkPositions::Cache ? "cache" : "original";
}

class BatchRunner {
  public:
    virtual ~BatchRunner() = default;
    virtual int max_batch() const = 0;
    // out[i] receives sequence i's logits (last position) and captures.
    virtual void forward_batch(std::span<const SeqInput> seqs, const Capture& want,
                               std::span<ForwardResult> out) = 0;
    virtual void reset_slot(int slot) = 0;
    virtual KvShape kv(int slot) const = 0;
    // K/V rows first..first+n-1 slot `slot` holds now: out [n_layers, 2 (K, V), n, kv_dim].
    virtual void read_kv_rows(int slot, int first, int n, std::vector<float>& out) = 0;
    virtual Backend* backend() = 0;
    // A paged runner (Model::make_paged_runner): slot `slot`'s rows are in the pool's blocks that
    // `table` names, `len` of them written; set before each pass that computes the slot. A pass
    // appends to the blocks the table already holds (whoever owns the blocks adds them first).
    virtual void set_blocks(int slot, std::span<const int> table, int len) {
        (void)slot, (void)table, (void)len;
        throw Error("this runner's KV caches are not paged");
    }
    // A bounded cache on a paged runner (StreamingLLM's sinks and window): a pass's queries see,
    // of the rows cached before it, the first `sinks` and the last `window` (0: every row), and
    // every row of the pass up to their own. A decode row is then exactly sliding-window
    // attention with sinks; a prompt in one pass attends to itself whole. `positions` says where
    // the sinks sit (SinkPositions). Under a window a RoPE model's positions may run past its
    // context (the cache stays bounded). Attention weights are not captured under a window.
    virtual void set_window(int sinks, int window, SinkPositions positions) {
        (void)sinks, (void)window, (void)positions;
        throw Error("this runner's KV caches are not paged");
    }
};

class KvBlockPool;  // core/model/kv_blocks.h

class Model {
  public:
    virtual ~Model() = default;
    virtual std::string name() const = 0;
    virtual const ModelConfig& config() const = 0;
    virtual const Tokenizer& tokenizer() const = 0;
    // Where the weights came from and in which number type, in words (`kvscope-cli info`).
    virtual std::string format() const { return {}; }
    virtual std::unique_ptr<Runner> make_runner(Backend& backend) const = 0;
    // nullptr when the model has no batched path (the toy).
    virtual std::unique_ptr<BatchRunner> make_batch_runner(Backend&, int /*max_batch*/) const {
        return nullptr;
    }
    // max_batch slots whose K/V rows live in `pool`'s blocks, through each slot's block table
    // (the pool outlives the runner); nullptr when the model has no batched path.
    virtual std::unique_ptr<BatchRunner> make_paged_runner(Backend&, int /*max_batch*/,
                                                           const KvBlockPool&) const {
        return nullptr;
    }
    // Tokens that end generation (llama2.c models stop at BOS).
    virtual std::vector<int> stop_tokens() const = 0;
    virtual StepCounts count_forward(int pos0, int T) const = 0;
    // Weights the forward pass uses; ModelConfig::parameter_count() assumes the Llama layout,
    // which the toy does not have.
    virtual std::size_t parameter_count() const { return config().parameter_count(); }
    virtual bool is_toy() const { return false; }
};

}  // namespace kvs
