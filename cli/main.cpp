// kvscope-cli: the engine without a window, for scripts, notebooks and tests.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/util/closest_name.h"
#include "core/util/error.h"
#include "core/util/utf8.h"
#include "core/util/version.h"

namespace {

struct Command {
    const char* name;
    int (*run)(int, char**);
    const char* help;
};

const Command kCommands[] = {
    {"generate", kvs::cli::cmd_generate, "generate text, printed as llama2.c's run.c does"},
    {"compare", kvs::cli::cmd_compare, "the same generation with and without the KV cache"},
    {"info", kvs::cli::cmd_info, "a model's shape and its KV cache cost"},
    {"bench", kvs::cli::cmd_bench, "prefill and decode throughput by length, cached and uncached"},
    {"lesson", kvs::cli::cmd_lesson, "run a lesson headless, checking its claims (--list)"},
    {"toy", kvs::cli::cmd_toy, "the tutorials' toy example: four hand-made heads, prefill, decode"},
    {"explain", kvs::cli::cmd_explain,
     "one attention row from the inside: q, K, q.k, /sqrt(d_k), mask, softmax, V, output"},
    {"mask", kvs::cli::cmd_mask,
     "causal against bidirectional: per layer, how far earlier K/V rows move after a token"},
    {"soak", kvs::cli::cmd_soak, "sessions back to back, printing resident memory (VmRSS)"},
    {"kernels", kvs::cli::cmd_kernels,
     "each op at the model's shapes on every implementation, checked and timed"},
    {"make-model", kvs::cli::cmd_make_model,
     "write a random-weight llama2.c checkpoint of a shape"},
    {"export", kvs::cli::cmd_export, "write a llama2.c model as a GGUF file (f32/f16/q8_0/...)"},
    {"replay", kvs::cli::cmd_replay,
     "a recorded run (trace JSON) without its model: summary, CSV, trace events"},
    {"serve", kvs::cli::cmd_serve,
     "many prompts over a paged KV cache: continuous batching, shared prefix blocks"},
};

void usage(FILE* f) {
    std::fputs("usage: kvscope-cli COMMAND [options]   (kvscope-cli COMMAND --help for more)\n", f);
    for (const auto& c : kCommands) std::fprintf(f, "  %-10s %s\n", c.name, c.help);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
        !std::strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!std::strcmp(argv[1], "--version")) {
        std::printf("kvscope-cli %s\n", kvs::kvscope_version());
        return 0;
    }
    for (const auto& c : kCommands) {
        if (std::strcmp(argv[1], c.name) != 0) continue;
        if (argc > 2 && !std::strcmp(argv[2], "--version")) {
            std::printf("kvscope-cli %s\n", kvs::kvscope_version());
            return 0;
        }
        try {
            return c.run(argc, argv);
        } catch (const kvs::Error& e) {
            // Messages quote file names and file contents: one line, no escape sequences.
            std::fprintf(stderr, "kvscope-cli: error: %s\n",
                         kvs::escape_for_one_line(e.what()).c_str());
            return 2;
        } catch (const std::bad_alloc&) {
            std::fprintf(stderr, "kvscope-cli: error: out of memory\n");
            return 2;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kvscope-cli: internal error: %s\n", e.what());
            return 1;
        }
    }
    std::vector<std::string> names;
    for (const auto& c : kCommands) names.emplace_back(c.name);
    const std::string near = kvs::closest_name(argv[1], names);
    const std::string hint = near.empty() ? "see kvscope-cli --help" : "did you mean " + near + "?";
    std::fprintf(stderr, "kvscope-cli: error: unknown command '%s' (%s)\n",
                 kvs::escape_for_one_line(argv[1]).c_str(), hint.c_str());
    return 2;
}
