#pragma once
// The matrices of a Llama model kept in fewer bytes than float32: F16 or BF16 (2 bytes a value),
// Q8_0 (34 bytes per 32 values), Q4_0, or a K-quant (core/files/kquant_blocks.h: Q4_K is 144
// bytes per 256 values), exactly as GGUF stores them (core/files/gguf_file.h holds the types, the
// one quantiser and the one decoder). A GGUF file's matrices are kept in the file's own types by
// default, used where the mapping has them (a quantised file stays about its own size in
// memory); --weights f32 expands them, another --weights converts every matrix to that type.
// The CPU matmul reads them in place (kernels/cpu/fast_matmul.cpp, kernels/cpu/quant_matmul.cpp).
// Decode reads every matrix once a token, so its speed follows their bytes. The norms stay
// float32; the embedding table too, unless the file's own is quantised and kept as it is (a
// token reads one row of it).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

// What --weights asks the loader to keep the matrices as: nothing (the default) keeps each as the
// file stores it (a GGUF's own types; a float32 file stays float32; a Hugging Face folder and a
// GPT-2 model are expanded to float32); F32 expands every matrix; another type converts every
// matrix to it (compact_weights.h's kept_type where its blocks do not fit a row).
using WeightsWanted = std::optional<GgmlType>;

// The matrix kinds, in llama2.c's order; wcls has layer 0 only; embedding (the token table, the
// same shape as wcls) only where a source keeps it compact.
enum class MatrixKind { wq, wk, wv, wo, w1, w2, w3, wcls, embedding };
// [rows, n] of one matrix of the kind.
std::pair<std::size_t, std::size_t> matrix_shape(const ModelConfig& c, MatrixKind k);
// The kinds each layer has one of, in llama2.c's order.
inline constexpr MatrixKind kLayerMatrixKinds[] = {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv,
                                                   MatrixKind::wo, MatrixKind::w1, MatrixKind::w2,
                                                   MatrixKind::w3};
// Layer `layer`'s float32 matrix of a kind in `w` ([rows, n] as matrix_shape says; wcls and
// embedding take layer 0): null where `w` holds no float32 copy of it.
const float* float_matrix(const ModelConfig& c, const LlamaWeights& w, MatrixKind k, int layer);

// The matrices the forward pass multiplies by, one per layer (and the classifier), and the
// embedding table when it is kept compact too.
struct CompactWeights {
    std::shared_ptr<const void> owner;  // keeps the bytes alive: converted copies, a mapping
    std::vector<CompactMatrix> wq, wk, wv, wo, w1, w2, w3;  // [n_layers] each
    CompactMatrix wcls;
    CompactMatrix embedding;  // [vocab, dim]: data null when the float32 copy holds the table
    std::uint64_t bytes = 0;  // of the matrices (not the embedding table)
    bool held() const { return !wq.empty(); }
    // "Q4_K x 61, Q6_K x 24": the matrices' types, most bytes first; "" when none is held.
    std::string types() const;
    // Each matrix, wcls last: for walking them all.
    std::vector<CompactMatrix> all() const;
    // The [n_layers] list of a layer kind; null for wcls and embedding.
    std::vector<CompactMatrix>* layers(MatrixKind k);
    // Layer `layer`'s matrix of a kind (wcls and embedding take layer 0): data null when none is
    // kept compact.
    CompactMatrix matrix(MatrixKind k, int layer) const;
};

// --weights: "f32", "f16", "bf16", "q8_0", "q4_0", "q2_k" .. "q6_k" (any case); throws
// kvs::Error with one line otherwise.
GgmlType weight_type_from_name(const std::string& name);
// "f32", "q4_k", ...: the option's spelling of a type.
std::string weight_type_option_name(GgmlType t);
// What the option asked for, in words: "as stored" when nothing was.
std::string weights_wanted_name(const WeightsWanted& w);

// The type a matrix with rows of n values is kept in when `want` is asked: `want` when the rows
// are whole blocks of it; else a K-quant falls back to a 32-value block type of at least its
// bits that kvscope writes (Q4_0 for Q2_K..Q4_K, Q8_0 for Q5_K and Q6_K; llama.cpp's quantizer
// picks IQ4_NL, Q5_0 or Q5_1 for all but Q6_K, types kvscope does not write), and a row that is
// not whole 32-value blocks either is kept F16, as llama.cpp does (what
// core/loaders/gguf_writer.h writes for them too).
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
// gives an empty CompactWeights. `want` none (as stored): every matrix in the source's own type,
// in place, and the embedding table too when it is not float32 (`source` is then asked for
// MatrixKind::embedding); a source that is float32 throughout gives an empty CompactWeights.
CompactWeights make_compact_weights(const ModelConfig& c, WeightsWanted want,
                                    const MatrixSource& source, std::shared_ptr<const void> keep,
                                    const SourceDoneWith& done_with = {});
// The same from a model's float32 views (a llama2.c checkpoint): converted at load.
CompactWeights compact_from_floats(const ModelConfig& c, const LlamaWeights& w, GgmlType want,
                                   const SourceDoneWith& done_with = {});

// The type each matrix is kept in (kind, layer); for MatrixKind::embedding F32 means the float32
// copy holds the table.
using KeptTypes = std::function<GgmlType(MatrixKind, int layer)>;
// Counted from shapes: the bytes a model's weights take in memory with its matrices kept as
// `kept` says (the float32 weights, `float32_bytes`, less the floats of what is kept compact,
// plus those in their kept types). What core/loaders/memory_budget.h's check is given.
std::uint64_t kept_weight_bytes(const ModelConfig& c, std::uint64_t float32_bytes,
                                const KeptTypes& kept);
// The same with every matrix kept as kept_type(want, n) (F32: `float32_bytes`).
std::uint64_t kept_weight_bytes(const ModelConfig& c, GgmlType want, std::uint64_t float32_bytes);

// Every weight as float32 in llama2.c's layout (point_llama_weights, without freq_cis), in memory
// the result owns: `floats`' views copied where they are set (the norms, biases, a float32
// table), every compact matrix and table of `cw` dequantised into its place. For a backend that
// multiplies float32 only, and for measuring the types against each other.
LlamaWeights expand_to_float32(const ModelConfig& c, const LlamaWeights& floats,
                               const CompactWeights& cw);

// Counted from shapes: every weight once in the type it is kept in (the FLOP and byte counts'
// "every weight read once", core/model/counts.h), float32 ones at 4 bytes.
std::uint64_t kept_parameter_bytes(const ModelConfig& c, const CompactWeights& cw);

// Counted from shapes: the bytes of weights one forward pass of T tokens reads, as they are kept:
// every matrix once (in its kept type, or float32; a shared classifier is the embedding table,
// read once as the classifier), T rows of the embedding table (in its kept type; GPT-2 also T
// rows of its position table) and the rest in float32 (norms, biases). What a step's
// StepCounts::weight_bytes says (TransformerModel::count_forward) and `kvscope-cli info` prints.
std::uint64_t weight_bytes_read(const ModelConfig& c, const CompactWeights& cw, int T);
// The same for one decode token (T = 1).
inline std::uint64_t weight_bytes_per_token(const ModelConfig& c, const CompactWeights& cw) {
    return weight_bytes_read(c, cw, 1);
}

}  // namespace kvs
