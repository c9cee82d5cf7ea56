#pragma once
// The matrices of a Llama model kept in fewer bytes than float32 (--weights): F16 or BF16
// (2 bytes a value) or Q8_0 (34 bytes per 32 values), exactly as GGUF stores them
// (core/files/gguf_file.h holds the types, the Q8_0 block, the one quantiser and the one decoder).
// Arithmetic stays float32: the CPU matmul dequantises in its inner loop
// (kernels/cpu/fast_matmul.cpp). Decode reads every matrix once a token, so its speed follows
// their bytes. The embedding table and the norms stay float32: a token reads one embedding row,
// and the norms are a few thousand floats.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/model/model_config.h"

namespace kvs {

struct LlamaWeights;

// One matrix [rows, n], row-major: rows of ggml_row_bytes(type, n) bytes.
struct CompactMatrix {
    GgmlType type = GgmlType::F32;
    const unsigned char* data = nullptr;
};

// The matrices the forward pass multiplies by, one per layer (and the classifier).
struct CompactWeights {
    GgmlType type = GgmlType::F32;      // asked for; F32: none kept, the float views are used
    std::shared_ptr<const void> owner;  // keeps the bytes alive: converted copies, a mapping
    std::vector<CompactMatrix> wq, wk, wv, wo, w1, w2, w3;  // [n_layers] each
    CompactMatrix wcls;
    std::uint64_t bytes = 0;  // of all the matrices above
    bool held() const { return type != GgmlType::F32; }
};

// The matrix kinds, in llama2.c's order; wcls has layer 0 only.
enum class MatrixKind { wq, wk, wv, wo, w1, w2, w3, wcls };
// [rows, n] of one matrix of the kind.
std::pair<std::size_t, std::size_t> matrix_shape(const ModelConfig& c, MatrixKind k);

// --weights: "f32", "f16", "bf16" or "q8_0" (any case); throws kvs::Error with one line otherwise.
GgmlType weight_type_from_name(const std::string& name);
// "f32", "f16", "bf16", "q8_0": the option's spelling.
std::string weight_type_option_name(GgmlType t);

// The type a matrix with rows of n values is kept in when `want` is asked: Q8_0 needs whole
// 32-value blocks, so other rows are kept F16 (what core/loaders/gguf_writer.h writes for them
// too).
GgmlType kept_type(GgmlType want, std::size_t n);

// Where a matrix's values are now: `type` bytes, rows of ggml_row_bytes(type, n).
struct MatrixBytes {
    GgmlType type = GgmlType::F32;
    const unsigned char* data = nullptr;
};
using MatrixSource = std::function<MatrixBytes(MatrixKind, int layer)>;
// Called with a source matrix's bytes once they are converted (a mapping lets those pages go).
using SourceDoneWith = std::function<void(const unsigned char*, std::size_t)>;

// Every matrix as kept_type(want, n): used in place when `source` already has it in that type
// (its bytes kept alive by `keep`), otherwise dequantised and re-encoded into a copy. `want` F32
// gives an empty CompactWeights.
CompactWeights make_compact_weights(const ModelConfig& c, GgmlType want, const MatrixSource& source,
                                    std::shared_ptr<const void> keep,
                                    const SourceDoneWith& done_with = {});
// The same from a model's float32 views (a llama2.c checkpoint): converted at load.
CompactWeights compact_from_floats(const ModelConfig& c, const LlamaWeights& w, GgmlType want,
                                   const SourceDoneWith& done_with = {});

// Counted from shapes: the bytes a model's weights take in memory with its matrices kept as `want`
// (the float32 weights, `float32_bytes`, less the matrices' floats, plus the matrices in their
// kept type; `want` F32: `float32_bytes`). What core/loaders/memory_budget.h's check is given.
std::uint64_t kept_weight_bytes(const ModelConfig& c, GgmlType want, std::uint64_t float32_bytes);

// Counted from shapes: the bytes of weights one decode token reads: every matrix (in its kept
// type, or float32), one embedding row and the norm vectors.
std::uint64_t weight_bytes_per_token(const ModelConfig& c, const CompactWeights& cw);

}  // namespace kvs
