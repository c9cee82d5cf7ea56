#pragma once
// Reader for llama2.c checkpoints (the legacy "version 0" layout that run.c maps):
// a 7 x int32 header, then float32 tensors in a fixed order. Everything is validated before use.
#include <cstddef>
#include <string>
#include <vector>

#include "core/model_config.h"

namespace kvs {

// Host copy of every weight, as views into one float array. Shapes are [out, in] row-major,
// so a matmul computes out[i] = sum_j W[i, j] * x[j], as run.c does.
struct LlamaWeights {
    std::vector<float> storage;
    const float* token_embedding = nullptr;  // [vocab, dim]
    const float* rms_att = nullptr;          // [layers, dim]
    const float* wq = nullptr;               // [layers, dim, dim]
    const float* wk = nullptr;               // [layers, kv_dim, dim]
    const float* wv = nullptr;               // [layers, kv_dim, dim]
    const float* wo = nullptr;               // [layers, dim, dim]
    const float* rms_ffn = nullptr;          // [layers, dim]
    const float* w1 = nullptr;               // [layers, hidden, dim]
    const float* w2 = nullptr;               // [layers, dim, hidden]
    const float* w3 = nullptr;               // [layers, hidden, dim]
    const float* rms_final = nullptr;        // [dim]
    const float* wcls = nullptr;             // [vocab, dim]; token_embedding when shared
};

struct Checkpoint {
    ModelConfig config;
    LlamaWeights weights;
};

// Throws kvs::Error with a one-line message naming `path` on any problem: missing or unreadable
// file, a header that is not a sane model, a size that differs from what the header implies.
Checkpoint load_checkpoint(const std::string& path);

// The same from bytes already in memory (for fuzzing and tests); `name` is used in messages.
Checkpoint parse_checkpoint(const unsigned char* data, std::size_t size, const std::string& name);

}  // namespace kvs
