// Fuzz target: llama2.c checkpoint bytes -> parse_checkpoint; whatever parses is then run for a
// few steps (prefill, decode, greedy or sampled) on the CPU backend and written as trace JSON,
// so odd shapes and NaN/inf weights go through the forward pass, the sampler and the writer.
#include <cstddef>
#include <cstdint>

#include "core/loaders/checkpoint.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_steps.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Checkpoint ck;
    try {
        ck = parse_checkpoint(data, size, "fuzz.bin");
    } catch (const Error&) {
        return 0;
    }
    const ModelConfig c = ck.config;
    FUZZ_CHECK(ck.weights.all.size() == c.stored_floats());
    FUZZ_CHECK(ck.weights.wcls >= ck.weights.all.data());
    FUZZ_CHECK(ck.weights.wcls + std::size_t(c.vocab_size) * c.dim <=
               ck.weights.all.data() + ck.weights.all.size());
    if (c.vocab_size < 3) return 0;  // no tokenizer has fewer than <unk>, <s>, </s>

    const auto tb = fuzz::tokenizer_bytes(c.vocab_size, {" ", "a", " a"});
    TransformerModel model(std::move(ck),
                           BpeTokenizer::parse(tb.data(), tb.size(), c.vocab_size, "t"), "fuzz");
    SessionConfig cfg;
    // The header's last byte picks greedy or sampled (top-p), so both paths see these weights.
    if (data[27] & 1) cfg.sampler.temperature = 1.0f;
    fuzz::run_a_few_steps(model, cfg);
    return 0;
}
