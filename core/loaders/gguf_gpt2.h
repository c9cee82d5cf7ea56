#pragma once
// GPT-2 in GGUF (general.architecture "gpt2"), with llama.cpp's names, both ways. GGUF dims are
// [in, out], the same bytes as our [out, in] rows, so nothing is transposed:
//   token_embd.weight {d, V}, position_embd.weight {d, n_positions},
//   blk.N.attn_norm.weight/.bias {d}, blk.N.attn_qkv.weight {d, 3d} (rows: q's d, k's d, v's d)
//   and .bias {3d}, blk.N.attn_output.weight {d, d}/.bias {d}, blk.N.ffn_norm.weight/.bias {d},
//   blk.N.ffn_up.weight {d, hidden}/.bias {hidden}, blk.N.ffn_down.weight {hidden, d}/.bias {d},
//   output_norm.weight/.bias {d}, and output.weight {d, V} only for a separate classifier.
// Metadata: gpt2.context_length (the position table's rows), gpt2.embedding_length,
// gpt2.feed_forward_length, gpt2.block_count, gpt2.attention.head_count,
// gpt2.attention.layer_norm_epsilon. The reader and the writer share this file's layout; the
// container, the tokenizer metadata and the writing itself are core/loaders/gguf_llama.h's and
// core/loaders/gguf_writer.h's.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/loaders/gguf_llama.h"

namespace kvs {

class GgufFile;

// parse_gguf_llama's reader for a file whose general.architecture is "gpt2" (same contract:
// everything checked before a byte of a tensor is read, one-line kvs::Error naming the file).
// The fused q/k/v tensors are split into wq, wk, wv and bq, bk, bv. Float32 weights only:
// `weights` other than F32 is refused.
GgufLlama parse_gguf_gpt2(const GgufFile& f, const GgufDoneWith& done_with,
                          const OpenLimits& limits, GgmlType weights);

// One tensor as the GGUF writer takes it: float32 values, written as `type`.
struct GgufTensorOut {
    std::string name;
    std::vector<std::uint64_t> dims;  // GGUF order: [in, out] for a matrix
    const float* data = nullptr;
    GgmlType type = GgmlType::F32;
};

// A GPT-2 model's tensors under those names, matrices (embeddings included) as `type` (F16 where
// a row is not whole blocks of it), vectors F32. The fused q/k/v tensors are assembled in
// `scratch`, which must outlive the result.
std::vector<GgufTensorOut> gguf_gpt2_tensors(const ModelConfig& c, const LlamaWeights& w,
                                             GgmlType type,
                                             std::deque<std::vector<float>>& scratch);

}  // namespace kvs
