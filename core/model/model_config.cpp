#include "core/model/model_config.h"

#include <cstddef>
#include <sstream>

#include "core/util/error.h"

namespace kvs {

const char* architecture_name(Architecture a) {
    return a == Architecture::Gpt2 ? "gpt2" : "llama";
}

std::uint64_t ModelConfig::stored_floats_exact() const {
    // In 64 bits whatever size_t is: a 32-bit process (the web page) checks this before it asks
    // for stored_floats(), whose size_t products would wrap there.
    const std::uint64_t d = dim, h = hidden_dim, L = n_layers, V = vocab_size, kv = kv_dim();
    if (gpt2()) {
        std::uint64_t n = V * d + std::uint64_t(n_positions) * d;  // wte, wpe
        n += 2 * L * d;                                            // ln_1 weight, bias
        n += L * (d * d + 2 * kv * d) + L * (d + 2 * kv);          // wq, wk, wv; bq, bk, bv
        n += L * d * d + L * d;                                    // wo, bo
        n += 2 * L * d;                                            // ln_2 weight, bias
        n += L * h * d + L * h;                                    // w1 (c_fc), b1
        n += L * d * h + L * d;                                    // w2 (mlp c_proj), b2
        n += 2 * d;                                                // ln_f weight, bias
        if (!shared_classifier) n += V * d;                        // lm_head
        return n;
    }
    std::uint64_t n = V * d;                                          // token_embedding_table
    n += L * d;                                                       // rms_att_weight
    n += L * d * d + 2 * L * kv * d + L * d * d;                      // wq, wk, wv, wo
    n += L * d;                                                       // rms_ffn_weight
    n += 3 * L * h * d;                                               // w1, w2, w3
    n += d;                                                           // rms_final_weight
    n += 2 * static_cast<std::uint64_t>(seq_len) * (head_dim() / 2);  // freq_cis real + imag
    if (!shared_classifier) n += V * d;                               // wcls
    if (qkv_bias) n += L * (d + 2 * kv);                              // bq, bk, bv
    return n;
}

std::size_t ModelConfig::stored_floats() const {
    return static_cast<std::size_t>(stored_floats_exact());
}

std::size_t ModelConfig::parameter_count() const {
    if (gpt2()) return stored_floats();
    return stored_floats() - 2 * static_cast<std::size_t>(seq_len) * (head_dim() / 2);
}

namespace {

// A float from a file as a message shows it: -1, 0, 1e-05, inf, nan (std::to_string's %f shows
// 1e-7 as 0.000000 and -1 as -1.000000).
std::string shown(float v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

}  // namespace

void ModelConfig::validate(const std::string& source, const std::string& format) const {
    auto fail = [&](const std::string& why) {
        throw Error(source + ": not a usable " + format + ": " + why);
    };
    // Bounds are generous for a teaching tool but keep every product below far from overflow.
    auto check = [&](int v, const char* name, int hi) {
        if (v <= 0 || v > hi)
            fail(std::string(name) + " = " + std::to_string(v) + " (must be 1.." +
                 std::to_string(hi) + ")");
    };
    check(dim, "dim", 1 << 14);
    check(hidden_dim, "hidden_dim", 1 << 16);
    check(n_layers, "n_layers", 256);
    check(n_heads, "n_heads", 1024);
    check(n_kv_heads, "n_kv_heads", 1024);
    check(vocab_size, "vocab_size", kMaxVocab);
    check(seq_len, "seq_len", 1 << 17);
    if (dim % n_heads != 0)
        fail("n_heads = " + std::to_string(n_heads) +
             " does not divide dim = " + std::to_string(dim));
    if (n_heads % n_kv_heads != 0)
        fail("n_kv_heads = " + std::to_string(n_kv_heads) +
             " does not divide n_heads = " + std::to_string(n_heads));
    if (!gpt2() && head_dim() % 2 != 0)
        fail("head size " + std::to_string(head_dim()) + " is odd (RoPE)");
    if (gpt2()) {
        // Learned positions: a position past the table has no embedding.
        check(n_positions, "n_positions", 1 << 17);
        if (seq_len > n_positions)
            fail("context " + std::to_string(seq_len) + " is longer than the " +
                 std::to_string(n_positions) + " learned positions");
        if (n_kv_heads != n_heads) fail("GPT-2 has as many key/value heads as query heads");
        if (!qkv_bias) fail("GPT-2's linear layers have biases");
        if (!rope_factors.empty()) fail("GPT-2 has no RoPE to scale");
    } else if (n_positions != 0) {
        fail("a learned position table in a Llama-shaped model");
    }
    // The KV cache is allocated for the whole context when a runner starts: a header may be
    // honest about its weights and still ask for more cache than any machine here has.
    // In 64 bits: on a 32-bit target (the web page) the product of a lying header would wrap.
    const std::uint64_t kv_bytes = std::uint64_t(kv_bytes_per_token(sizeof(float))) * seq_len;
    if (kv_bytes > kMaxKvCacheBytes)
        fail("its KV cache for the whole context (" + std::to_string(seq_len) + " tokens) needs " +
             std::to_string(kv_bytes >> 20) + " MiB, more than kvscope's " +
             std::to_string(kMaxKvCacheBytes >> 20) + " MiB");
    // The weights must be addressable here: 4 bytes a float, the count exact in 64 bits (on a
    // 32-bit target a header's 2^34 floats would otherwise wrap to a small, plausible size).
    if (stored_floats_exact() > std::uint64_t(PTRDIFF_MAX) / sizeof(float))
        fail("its weights (" + std::to_string(stored_floats_exact()) +
             " floats) are more than this process can address");
    // NaN fails every comparison, so each bound is written as what must hold.
    if (!(rope_theta > 1.0f && rope_theta <= 1e9f))
        fail("RoPE base " + shown(rope_theta) + " (must be above 1, at most 1e9)");
    if (!(norm_eps > 0.0f && norm_eps <= 0.01f))
        fail(std::string(gpt2() ? "LayerNorm" : "RMSNorm") + " epsilon " + shown(norm_eps) +
             " (must be above 0, at most 0.01)");
    if (!rope_factors.empty()) {
        if (rope_factors.size() != std::size_t(head_dim() / 2))
            fail(std::to_string(rope_factors.size()) + " rope scaling factors for " +
                 std::to_string(head_dim() / 2) + " RoPE pairs");
        for (float f : rope_factors)
            if (!(f > 0.0f && f <= 1e6f))
                fail("rope scaling factor " + shown(f) + " (must be above 0, at most 1e6)");
    }
}

std::string ModelConfig::describe() const {
    std::ostringstream s;
    if (gpt2()) s << "gpt2, ";
    s << "dim " << dim << ", hidden " << hidden_dim << ", layers " << n_layers << ", heads "
      << n_heads << ", kv heads " << n_kv_heads << ", head size " << head_dim() << ", vocab "
      << vocab_size << ", context " << seq_len << ", "
      << (shared_classifier ? "shared" : "separate") << " classifier";
    // Only what differs from llama2.c's, so its models read as before.
    if (gpt2()) {
        s << ", " << n_positions << " learned positions";
        if (norm_eps != 1e-5f) s << ", LayerNorm eps " << norm_eps;
        return s.str();
    }
    if (rope_theta != 10000.0f) s << ", RoPE base " << rope_theta;
    if (!rope_factors.empty()) s << ", rope scaling";
    if (norm_eps != 1e-5f) s << ", RMSNorm eps " << norm_eps;
    if (qkv_bias) s << ", q/k/v biases";
    return s.str();
}

}  // namespace kvs
