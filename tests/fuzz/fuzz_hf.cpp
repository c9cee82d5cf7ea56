// Fuzz target: a Hugging Face Llama (or GPT-2) folder's two inputs in one: config.json's text, a
// NUL byte, then a safetensors file -> SafetensorsFile::parse and parse_hf_llama (header JSON,
// dtypes, shapes, offsets, the config's keys against the tensors, the q/k row order, GPT-2's
// Conv1D transposes and fused q/k/v). Whatever parses is checked and, when its KV cache is small,
// run for a few greedy steps on the CPU backend.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/loaders/hf_llama.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_steps.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
    if (!nul) return 0;
    const std::string_view config(reinterpret_cast<const char*>(data), std::size_t(nul - data));
    HfLlama h;
    try {
        const auto f = SafetensorsFile::parse(nul + 1, size - std::size_t(nul + 1 - data), "fuzz");
        for (const auto& t : f.tensors()) FUZZ_CHECK(t.data >= nul + 1 && t.data <= data + size);
        h = parse_hf_llama(config, {f}, "fuzz");
    } catch (const Error&) {
        return 0;
    }
    const ModelConfig c = h.ck.config;
    FUZZ_CHECK(h.ck.weights.wcls + std::size_t(c.vocab_size) * c.dim <=
               h.ck.weights.all.data() + h.ck.weights.all.size());
    FUZZ_CHECK(c.qkv_bias == (h.ck.weights.bv != nullptr));
    if (c.qkv_bias && !c.gpt2())  // Qwen2's biases, the last floats of the copy
        FUZZ_CHECK(h.ck.weights.bv + std::size_t(c.n_layers) * c.kv_dim() ==
                   h.ck.weights.all.data() + h.ck.weights.all.size());
    if (c.kv_bytes_per_token() * c.seq_len > (std::size_t(64) << 20) || c.vocab_size < 3) return 0;
    const auto tb = fuzz::tokenizer_bytes(c.vocab_size, {"a", " a"});
    TransformerModel m(std::move(h.ck),
                       BpeTokenizer::parse(tb.data(), tb.size(), c.vocab_size, "tok"), "fuzz");
    fuzz::run_a_few_steps(m);
    return 0;
}
