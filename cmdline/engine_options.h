#pragma once
// The option groups both command lines take, defined once: kvscope-cli's subcommands and the
// kvscope window read the same names with the same checks (and the same help).
#include <string>
#include <vector>

#include "cmdline/command_line.h"
#include "core/files/gguf_file.h"

namespace kvs::cmdline {

// What opens a model on a backend: --model, --tokenizer, --backend, --threads, --weights.
std::vector<OptionSpec> model_options();
OptionSpec backend_option();
// --threads alone, for a command that runs on a backend without --model (lesson).
OptionSpec threads_option();
// --prompt TEXT ("" is a prompt too), with the program's words for its default.
OptionSpec prompt_option(const std::string& help);
// --timing-runs N: how many runs of a short step its measured time is the median of.
OptionSpec timing_option();

// --weights f32|f16|bf16|q8_0: the type the model's matrices are kept in (default f32;
// core/model/compact_weights.h). A bad name fails with one line.
GgmlType weights_from(const CommandLine& c);
// --threads N: the CPU backend's threads, 1..256 (default 1).
int threads_from(const CommandLine& c);
// --backend B, one of kernels' names (auto, cpu, cuda, cuda-emulated); `fallback` when not given.
std::string backend_from(const CommandLine& c, const std::string& fallback);
// --timing-runs N, 1..100; `fallback` when not given.
int timing_runs_from(const CommandLine& c, int fallback);

}  // namespace kvs::cmdline
