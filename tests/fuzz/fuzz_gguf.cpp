// Fuzz target: GGUF bytes -> parse_gguf_llama (container, metadata, tensor infos, shapes, the
// tokenizer from metadata, dequantisation); whatever parses is checked and, when its KV cache is
// small, run for a few greedy steps on the CPU backend with the prompt encoded by its tokenizer.
#include <cstddef>
#include <cstdint>

#include "core/loaders/gguf_llama.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_steps.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    GgufLlama g;
    try {
        g = parse_gguf_llama(data, size, "fuzz.gguf");
    } catch (const Error&) {
        return 0;
    }
    const ModelConfig c = g.ck.config;
    FUZZ_CHECK(g.tok->vocab_size() == c.vocab_size);
    FUZZ_CHECK(g.ck.weights.wcls >= g.ck.weights.all.data());
    FUZZ_CHECK(g.ck.weights.wcls + std::size_t(c.vocab_size) * c.dim <=
               g.ck.weights.all.data() + g.ck.weights.all.size());
    for (const char* text : {"", "a a", "\xE2\x96\x81<s>\xFF"})
        for (int id : g.tok->encode(text)) {
            FUZZ_CHECK(id >= 0 && id < c.vocab_size);
            (void)g.tok->printable(-1, id);
        }
    if (c.kv_bytes_per_token() * c.seq_len > (std::size_t(64) << 20)) return 0;
    fuzz::run_a_few_steps(*make_gguf_model(std::move(g), "fuzz"));
    return 0;
}
