#include "cli/commands.h"

namespace kvs::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"generate", cmd_generate, "generate text, printed as llama2.c's run.c does",
         generate_options, "model"},
        {"compare", cmd_compare, "the same generation with and without the KV cache",
         compare_options, "model"},
        {"info", cmd_info, "a model's shape and its KV cache cost", info_options, "model"},
        {"bench", cmd_bench, "prefill and decode throughput by length, cached and uncached",
         bench_options, "model"},
        {"lesson", cmd_lesson, "run a lesson headless, checking its claims (--list)",
         lesson_options, "lesson"},
        {"toy", cmd_toy, "the tutorials' toy example: four hand-made heads, prefill, decode",
         toy_options, nullptr},
        {"explain", cmd_explain,
         "one attention row from the inside: q, K, q.k, /sqrt(d_k), mask, softmax, V, output",
         explain_options, "model"},
        {"mask", cmd_mask,
         "causal against bidirectional: per layer, how far earlier K/V rows move after a token",
         mask_options, "model"},
        {"soak", cmd_soak, "sessions back to back, printing resident memory (VmRSS)", soak_options,
         "model"},
        {"kernels", cmd_kernels,
         "each op at the model's shapes on every implementation, checked and timed",
         kernels_options, "model"},
        {"make-model", cmd_make_model, "write a random-weight llama2.c checkpoint of a shape",
         make_model_options, nullptr},
        {"export", cmd_export, "write a llama2.c model as a GGUF file or a Hugging Face folder",
         export_options, "model"},
        {"replay", cmd_replay,
         "a recorded run (trace JSON) without its model: summary, CSV, trace events",
         replay_options, "trace"},
        {"serve", cmd_serve,
         "many prompts over a paged KV cache: continuous batching, shared prefix blocks",
         serve_options, "model"},
    };
    return table;
}

}  // namespace kvs::cli
