#pragma once
// What the KV cache of the same model would cost with other key/value head counts. Only the
// number of K/V heads changes; layers, head size and value width stay the model's:
//   bytes per token = 2 (K and V) x n_layers x n_kv_heads x head_dim x bytes_per_value
// MHA: one K/V head per query head; MQA: one K/V head shared by all; GQA: anything between
// that divides the query heads evenly.
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/model_config.h"

namespace kvs {

struct KvVariant {
    std::string kind;  // "MHA", "GQA" or "MQA"
    int n_kv_heads = 0;
    int group = 0;  // query heads per K/V head
    std::size_t bytes_per_token = 0;
    bool is_model = false;  // the model's own layout
};

inline std::size_t kv_bytes_per_token(const ModelConfig& c, int n_kv_heads,
                                      int bytes_per_value = 4) {
    ModelConfig other = c;  // the same model with another K/V head count
    other.n_kv_heads = n_kv_heads;
    return other.kv_bytes_per_token(bytes_per_value);
}

// Every K/V head count that divides n_heads, most heads (MHA) first, fewest (MQA) last.
inline std::vector<KvVariant> kv_what_if(const ModelConfig& c, int bytes_per_value = 4) {
    std::vector<KvVariant> out;
    for (int kv = c.n_heads; kv >= 1; --kv) {
        if (c.n_heads % kv != 0) continue;
        KvVariant v;
        v.kind = kv == c.n_heads ? "MHA" : kv == 1 ? "MQA" : "GQA";
        v.n_kv_heads = kv;
        v.group = c.n_heads / kv;
        v.bytes_per_token = kv_bytes_per_token(c, kv, bytes_per_value);
        v.is_model = kv == c.n_kv_heads;
        out.push_back(v);
    }
    return out;
}

}  // namespace kvs
