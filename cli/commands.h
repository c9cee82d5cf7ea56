#pragma once
// kvscope-cli subcommands. Each returns the process exit code; user errors are thrown as
// kvs::Error and become exit code 2 in main().
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cmdline/engine_options.h"
#include "core/model/model.h"
#include "core/session/session.h"
#include "kernels/backend_factory.h"

namespace kvs::cli {

// Each subcommand's option table (what its --help lists and its command line reads), and the
// command itself. A command whose table has --model takes the model as its one positional word
// too (`kvscope-cli info model.gguf`).
std::vector<OptionSpec> generate_options();
std::vector<OptionSpec> compare_options();
std::vector<OptionSpec> info_options();
std::vector<OptionSpec> bench_options();
std::vector<OptionSpec> lesson_options();
std::vector<OptionSpec> toy_options();
std::vector<OptionSpec> soak_options();
std::vector<OptionSpec> explain_options();
std::vector<OptionSpec> mask_options();
std::vector<OptionSpec> make_model_options();
std::vector<OptionSpec> kernels_options();
std::vector<OptionSpec> export_options();
std::vector<OptionSpec> replay_options();
std::vector<OptionSpec> serve_options();

int cmd_generate(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_lesson(int argc, char** argv);
int cmd_toy(int argc, char** argv);
int cmd_soak(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_mask(int argc, char** argv);
int cmd_make_model(int argc, char** argv);
int cmd_kernels(int argc, char** argv);
int cmd_export(int argc, char** argv);
int cmd_replay(int argc, char** argv);
int cmd_serve(int argc, char** argv);

// A subcommand: its name, what runs it, one line of help, its option table and the option its
// positional word gives (model, lesson, trace; null for none).
struct Command {
    const char* name;
    int (*run)(int, char**);
    const char* help;
    std::vector<OptionSpec> (*options)();
    const char* positional;
};
const std::vector<Command>& commands();

// The option groups the window takes too (--model, --tokenizer, --backend, --threads, --prompt,
// --timing-runs, the sampler): defined once, in cmdline/engine_options.h.
using cmdline::backend_from;
using cmdline::backend_option;
using cmdline::prompt_option;
using cmdline::sampler_from;
using cmdline::sampler_options;
using cmdline::threads_from;
using cmdline::threads_option;
using cmdline::timing_option;
// cmdline's model options and --context N (kvscope-cli's only: the tokens a session may hold,
// which the KV cache is allocated for; default the model's context).
std::vector<OptionSpec> model_options();
// --timing-runs N as the policy of the engine's step timing (`fallback_runs` when not given).
TimingPolicy timing_from(const Args& a, int fallback_runs = TimingPolicy().runs);
// How a command's step times were measured, in words for its summary.
std::string timing_words(const TimingPolicy& t);

// A model and a backend opened from --model / --tokenizer / --backend / --context: the backend
// first, so the model is refused before loading when its weights and KV cache at that context do
// not fit the backend's memory (core/loaders/memory_budget.h).
struct Opened {
    std::unique_ptr<Model> model;
    BackendChoice backend;
};
Opened open_from(const Args& a);

// max_new_tokens from --max-new-tokens: `fallback` is clamped to what the context allows,
// an explicit value beyond it is an error.
int max_new_from(const Args& a, const Model& m, const std::vector<int>& prompt, int fallback);

}  // namespace kvs::cli
