#pragma once
// kvscope-cli subcommands. Each returns the process exit code; user errors are thrown as
// kvs::Error and become exit code 2 in main().
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/model.h"
#include "core/session.h"
#include "kernels/backend_factory.h"

namespace kvs::cli {

int cmd_generate(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_lesson(int argc, char** argv);
int cmd_toy(int argc, char** argv);
int cmd_soak(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_make_model(int argc, char** argv);
int cmd_export(int argc, char** argv);

// Options every model-running command shares (--model, --tokenizer, --backend, --threads).
std::vector<OptionSpec> model_options();
// --threads alone, for commands that run on a backend without --model (lesson), and its value.
OptionSpec threads_option();
int threads_from(const Args& a);
std::vector<OptionSpec> sampler_options();
SamplerConfig sampler_from(const Args& a);
// --timing-runs N: how many runs of a short step its measured time is the median of.
OptionSpec timing_option();
TimingPolicy timing_from(const Args& a);

// A model and a backend opened from --model / --tokenizer / --backend.
struct Opened {
    std::unique_ptr<Model> model;
    BackendChoice backend;
};
Opened open_from(const Args& a);

// max_new_tokens from --max-new-tokens: `fallback` is clamped to what the context allows,
// an explicit value beyond it is an error.
int max_new_from(const Args& a, const Model& m, const std::vector<int>& prompt, int fallback);

}  // namespace kvs::cli
