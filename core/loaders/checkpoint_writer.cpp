#include "core/loaders/checkpoint_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/loaders/checkpoint.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "core/util/splitmix64.h"

namespace kvs {
namespace {

void put_bytes(std::vector<unsigned char>& out, const void* p, std::size_t n) {
    // resize + memcpy: vector::insert of a byte range trips GCC 12's -Wstringop-overflow
    const std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
}

// Uniform in [-scale, scale) from splitmix64's top 24 bits.
float uniform(std::uint64_t& state, float scale) {
    return (static_cast<float>(splitmix64_next(state) >> 40) * (2.0f / 16777216.0f) - 1.0f) * scale;
}

}  // namespace

void write_random_checkpoint(const std::string& path, const ModelConfig& c, std::uint64_t seed) {
    c.validate(path);
    const std::int32_t header[7] = {
        c.dim,     c.hidden_dim, c.n_layers,
        c.n_heads, c.n_kv_heads, c.shared_classifier ? c.vocab_size : -c.vocab_size,
        c.seq_len};

    // Tensor lengths in file order (as core/loaders/checkpoint.cpp reads them) and what fills them.
    const std::size_t d = c.dim, hd = c.hidden_dim, L = c.n_layers, V = c.vocab_size,
                      kv = c.kv_dim(), freq = 2 * std::size_t(c.seq_len) * (c.head_dim() / 2);
    enum Fill { Random, One, Zero };
    const std::vector<std::pair<std::size_t, Fill>> tensors = {
        {V * d, Random},
        {L * d, One},
        {L * d * d, Random},
        {L * kv * d, Random},
        {L * kv * d, Random},
        {L * d * d, Random},
        {L * d, One},
        {L * hd * d, Random},
        {L * d * hd, Random},
        {L * hd * d, Random},
        {d, One},
        {freq, Zero},
        {c.shared_classifier ? 0 : V * d, Random}};
    // Through core/output_file like every output: temporary file, fsync, rename; an input of
    // this run (the model being read) is refused. Streamed in chunks: a checkpoint can be GiBs,
    // so the disk must have room for it first.
    check_output_space(path, sizeof header + c.stored_floats_exact() * sizeof(float),
                       checkpoint_output());
    write_output_file(
        path,
        [&](const OutputSink& put) {
            put(std::string_view(reinterpret_cast<const char*>(header), sizeof header));
            std::uint64_t rng = seed;
            const float scale = 1.0f / std::sqrt(static_cast<float>(c.dim));
            std::vector<float> chunk(1 << 16);
            for (const auto& [n, fill] : tensors)
                for (std::size_t done = 0; done < n;) {
                    const std::size_t m = std::min(chunk.size(), n - done);
                    for (std::size_t i = 0; i < m; ++i)
                        chunk[i] =
                            fill == Random ? uniform(rng, scale) : (fill == One ? 1.0f : 0.0f);
                    put(std::string_view(reinterpret_cast<const char*>(chunk.data()),
                                         m * sizeof(float)));
                    done += m;
                }
        },
        checkpoint_output());
}

OutputKind checkpoint_output() {
    return unmarked_output("llama2.c checkpoint");
}

OutputKind tokenizer_bin_output() {
    return unmarked_output("llama2.c tokenizer");
}

std::vector<float> random_gpt2_weights(const ModelConfig& c, std::uint64_t seed) {
    c.validate("make-model");
    check_allocation(c.stored_floats_exact() * sizeof(float),
                     {"make-model", "the weights of " + c.describe()});
    std::vector<float> all(c.stored_floats());
    std::uint64_t rng = seed;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.dim));
    for (float& v : all) v = uniform(rng, scale);
    LlamaWeights w;
    point_llama_weights(w, all.data(), c, false);
    auto set = [&](const float* at, std::size_t n, float value) {
        std::fill_n(all.begin() + (at - all.data()), n, value);
    };
    const std::size_t d = c.dim, L = c.n_layers;
    set(w.norm_att, L * d, 1.0f);
    set(w.norm_ffn, L * d, 1.0f);
    set(w.norm_final, d, 1.0f);
    for (const float* b : {w.norm_att_bias, w.bq, w.bk, w.bv, w.bo, w.norm_ffn_bias, w.b2})
        set(b, L * d, 0.0f);
    set(w.b1, L * std::size_t(c.hidden_dim), 0.0f);
    set(w.norm_final_bias, d, 0.0f);
    return all;
}

namespace {

// The one layout of tokenizer.bin: int32 max_token_length, then per token float32 score, int32
// length, bytes.
std::vector<unsigned char> tokenizer_bin(std::int32_t max_len, const std::vector<std::string>& v,
                                         const std::vector<float>& scores) {
    std::vector<unsigned char> out;
    put_bytes(out, &max_len, 4);
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto len = static_cast<std::int32_t>(v[i].size());
        put_bytes(out, &scores[i], 4);
        put_bytes(out, &len, 4);
        put_bytes(out, v[i].data(), v[i].size());
    }
    return out;
}

}  // namespace

std::vector<unsigned char> tokenizer_file_bytes(const std::vector<std::string>& pieces, int vocab) {
    std::vector<std::string> v = {"<unk>", "\n<s>\n", "\n</s>\n"};
    for (int b = 0; b < 256 && static_cast<int>(v.size()) < vocab; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        v.push_back(buf);
    }
    for (const auto& p : pieces)
        if (static_cast<int>(v.size()) < vocab) v.push_back(p);
    while (static_cast<int>(v.size()) < vocab) v.push_back("<pad" + std::to_string(v.size()) + ">");
    std::int32_t max_len = 0;
    std::vector<float> scores;
    for (std::size_t i = 0; i < v.size(); ++i) {
        max_len = std::max<std::int32_t>(max_len, static_cast<std::int32_t>(v[i].size()));
        // Byte and special pieces score 0; merged pieces -rank (earlier merges first); pads never.
        const bool merged = i >= 259 && i < 259 + pieces.size();
        scores.push_back(merged ? -static_cast<float>(i - 259) : (i >= 259 ? -1e6f : 0.0f));
    }
    return tokenizer_bin(max_len, v, scores);
}

std::vector<unsigned char> tokenizer_file_bytes(const BpeTokenizer& tok) {
    std::vector<std::string> v;
    std::vector<float> scores;
    for (int i = 0; i < tok.vocab_size(); ++i) {
        v.push_back(tok.piece(i));
        scores.push_back(tok.score(i));
    }
    return tokenizer_bin(tok.max_token_length(), v, scores);
}

}  // namespace kvs
