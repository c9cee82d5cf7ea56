#include "cmdline/engine_options.h"

#include "core/model/compact_weights.h"
#include "core/util/error.h"
#include "kernels/backend_factory.h"

namespace kvs::cmdline {

std::vector<OptionSpec> model_options() {
    return {{"model", "M", "default (ours) | toy | stories260K | FILE.bin | FILE.gguf | HF folder"},
            {"tokenizer", "FILE", "llama2.c tokenizer (default: found beside the model)"},
            backend_option(),
            threads_option(),
            {"weights", "W",
             "f32 | f16 | bf16 | q8_0: the weight matrices in 32, 16 or 8\nbits (default f32; "
             "CPU backend only; arithmetic\nstays float32)"}};
}

OptionSpec backend_option() {
    return {"backend", "B", "auto | cpu | cuda | cuda-emulated (default auto)"};
}

OptionSpec threads_option() {
    return {"threads", "N", "CPU backend threads (default 1; small ops stay on one)"};
}

OptionSpec prompt_option(const std::string& help) {
    return {"prompt", "TEXT", help, true};
}

OptionSpec timing_option() {
    return {"timing-runs", "N",
            "time each step under 10 ms as the median of N runs of it\n(default 3, more up to 9 "
            "when most runs were slowed\nby the machine; 1 = one run)"};
}

GgmlType weights_from(const CommandLine& c) {
    if (!c.has("weights")) return GgmlType::F32;
    try {
        return weight_type_from_name(c.str("weights"));
    } catch (const Error& e) {
        c.fail(e.what());
    }
}

int threads_from(const CommandLine& c) {
    return c.integer("threads", 1, 1, 256);
}

std::string backend_from(const CommandLine& c, const std::string& fallback) {
    const std::string b = c.str("backend", fallback);
    if (c.has("backend") && !is_backend_name(b))
        c.fail("--backend: unknown backend '" + b + "' (choose " + backend_choices() + ")");
    return b;
}

int timing_runs_from(const CommandLine& c, int fallback) {
    return c.integer("timing-runs", fallback, 1, 100);
}

}  // namespace kvs::cmdline
