#pragma once
// Writes a llama2.c model (checkpoint + tokenizer.bin) as a GGUF v3 file of the `llama`
// architecture that llama.cpp and core/loaders/gguf_llama.h read. The mapping (checked against
// llama.cpp by tests/peer/peer_llama_cpp.cpp): no Q/K permutation (llama2.c's
// RoPE pairs are llama.cpp's normal mode); matrices [in, out] in GGUF's dimension order (the same
// bytes as llama2.c's [out, in] rows); a shared classifier means no output.weight; the pieces'
// spaces become '▁', ids 0/1/2 are <unk> (UNKNOWN), <s>, </s> (CONTROL), "<0xNN>" pieces are BYTE.
// A model with q/k/v biases is written as `qwen2`, a GPT-2 one (ModelConfig::gpt2()) as `gpt2`
// with llama.cpp's names; the tensors' names and order are the architecture's table's
// (core/loaders/arch_table.h: GPT-2's q/k/v fused again into attn_qkv); the tokenizer
// metadata is the same for all three.
#include <cstddef>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/loaders/checkpoint.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/output_file.h"

namespace kvs {

// One matrix (a 2-D tensor) as written: its type, and the values in one of its rows.
struct WrittenMatrix {
    GgmlType type = GgmlType::F32;
    std::uint64_t row = 0;
};

// What a GGUF write did: the bytes, whether `path` is a regular file or a device or pipe, and
// every matrix's type in the file's order (not always the type asked: see below).
struct GgufWritten : Written {
    std::vector<WrittenMatrix> matrices;
};

// `type` is the matrices' type: F32, F16, BF16, Q8_0, Q4_0 or Q2_K .. Q6_K. Norm vectors stay
// F32 (as llama.cpp's converter keeps them), and a matrix whose rows are not whole blocks of the
// type is written in compact_weights.h's kept_type (Q4_0 or Q8_0 for a K-quant, else F16).
// Written through core/util/output_file.h (temporary file renamed over `path`; an input of this
// run is refused). Throws kvs::Error naming `path`.
// The GGUF files kvscope writes start "GGUF", version 3, the counts, general.architecture and
// then general.description "written by kvscope": an export over such a file replaces it, over
// any other GGUF (a model of the user's) it is refused.
OutputKind gguf_output();

GgufWritten write_gguf_llama(const std::string& path, const ModelConfig& c, const LlamaWeights& w,
                             const BpeTokenizer& tok, GgmlType type, const std::string& model_name);

}  // namespace kvs
