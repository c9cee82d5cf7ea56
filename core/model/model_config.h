#pragma once
// Shapes of a model, as read from a llama2.c checkpoint header, the hyper-parameters other
// Llama-family files set (RoPE base and scaling, RMSNorm's epsilon), and GPT-2's differences.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tokenizers/tokenizer.h"

namespace kvs {

// The two block designs kvscope runs (core/model/transformer_runner.cpp writes both forward
// passes).
//   Llama: RMSNorm, RoPE on q and k, SwiGLU MLP (w1 gate, w3 up, w2 down), no biases (Qwen2:
//          q/k/v biases).
//   Gpt2:  LayerNorm with a bias, learned position embeddings added to the token's, biases on
//          every linear layer, GELU MLP (w1 up, w2 down; no w3), no RoPE.
enum class Architecture { Llama, Gpt2 };
const char* architecture_name(Architecture a);  // "llama", "gpt2"

struct ModelConfig {
    Architecture arch = Architecture::Llama;
    int dim = 0;         // residual stream width
    int hidden_dim = 0;  // the MLP's inner width (SwiGLU's; GPT-2's, 4 x dim)
    int n_layers = 0;
    int n_heads = 0;     // query heads
    int n_kv_heads = 0;  // key/value heads (GQA: fewer than n_heads)
    int vocab_size = 0;  // always positive here; the sign in the file picks the classifier
    int seq_len = 0;     // context length
    bool shared_classifier = true;
    // llama2.c's values; GGUF and Hugging Face files may set others (SmolLM2: base 100000,
    // Llama 3: 500000 with rope scaling, epsilon 1e-6 or 1e-5).
    float rope_theta = 10000.0f;  // RoPE's base: pair p turns by pos * theta^(-2p / head_dim)
    float norm_eps = 1e-5f;       // RMSNorm: x / sqrt(mean(x^2) + eps)
    // Rope scaling: pair p's frequency divided by rope_factors[p], [head_dim / 2] (linear
    // scaling: all the same; Llama 3's: 1 for short wavelengths up to `factor` for long ones,
    // core/model/rope_frequencies.h). Empty: none.
    std::vector<float> rope_factors;
    // Qwen2: the q, k and v projections add a bias (bq [dim], bk and bv [kv_dim] per layer).
    // Never in a llama2.c file; stored after the llama2.c tensors in a loader's copy.
    // Always set for GPT-2, whose every linear layer has a bias.
    bool qkv_bias = false;
    // GPT-2: rows of the learned position table ([n_positions, dim]), the longest context the
    // model knows; seq_len (the session's context) is at most this. 0 for Llama (RoPE).
    int n_positions = 0;

    bool gpt2() const { return arch == Architecture::Gpt2; }
    int head_dim() const { return dim / n_heads; }
    int kv_dim() const { return n_kv_heads * head_dim(); }
    int kv_mul() const { return n_heads / n_kv_heads; }  // query heads per kv head
    // One token's KV cache: 2 (K and V) x n_layers x n_kv_heads x head_dim x bytes_per_value.
    // The one place this formula is written; kv_what_if asks it about other K/V head counts.
    // In 64 bits: on a 32-bit target (the web page) a lying header's product would wrap.
    std::uint64_t kv_bytes_per_token(int bytes_per_value = 4) const {
        return std::uint64_t(2) * n_layers * n_kv_heads * head_dim() * bytes_per_value;
    }

    // Number of float32 weights the checkpoint stores after its header, freq_cis included (and
    // the q/k/v biases after them, for a model that has them). GPT-2: every weight in the order
    // point_llama_weights takes them (core/loaders/checkpoint.h), no freq_cis.
    std::size_t stored_floats() const;
    std::uint64_t stored_floats_exact() const;  // the same count in 64 bits (validate checks it)
    // Weights used by the forward pass (freq_cis excluded, shared classifier counted once).
    std::size_t parameter_count() const;
    // The largest KV cache (K and V, every layer, the whole context, float32) a model may need:
    // 4 GiB, or 1 GiB in a 32-bit process (the web page's WebAssembly addresses 2 GiB in all).
    // The largest vocabulary kvscope reads (every tokenizer reader and validate() hold to it).
    static constexpr int kMaxVocab = kMaxVocabulary;
    static constexpr std::uint64_t kMaxKvCacheBytes = std::uint64_t(sizeof(void*) >= 8 ? 4 : 1)
                                                      << 30;

    // Throws kvs::Error "SOURCE: not a usable FORMAT: WHY" when a dimension is not positive, not
    // sane, the heads do not divide evenly, the whole context's KV cache would exceed
    // kMaxKvCacheBytes, or the RoPE base, scaling factors or epsilon are not finite, positive and
    // in range. FORMAT names what the shapes were read from ("GGUF file", "Hugging Face model",
    // "trace"), so a message never calls a GGUF file or a folder a llama2.c checkpoint.
    void validate(const std::string& source,
                  const std::string& format = "llama2.c checkpoint") const;
    std::string describe() const;
};

}  // namespace kvs
