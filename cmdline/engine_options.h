#pragma once
// The option groups both command lines take, defined once: kvscope-cli's subcommands and the
// kvscope window read the same names with the same checks (and the same help).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cmdline/command_line.h"
#include "core/files/gguf_file.h"
#include "core/model/compact_weights.h"
#include "core/session/cache_view.h"
#include "core/session/sampler.h"

namespace kvs::cmdline {

// What opens a model on a backend: --model, --tokenizer, --backend, --threads, --weights.
std::vector<OptionSpec> model_options();
// --model M (-m) alone, and --weights W alone (export names its own --type).
OptionSpec model_option();
OptionSpec weights_option();
OptionSpec backend_option();
// --threads alone, for a command that runs on a backend without --model (lesson).
OptionSpec threads_option();
// --prompt TEXT (-p; "" is a prompt too), with the program's words for its default, and
// --file FILE (-f): the prompt read from a file, "-" for standard input.
OptionSpec prompt_option(const std::string& help);
OptionSpec file_option();
// The prompt --prompt or --file gives; nullopt when neither does; both is an error. The file's
// one line break at its end is not part of the prompt, as llama.cpp's -f reads it. At most
// 16 MiB.
std::optional<std::string> prompt_from(const CommandLine& c);
// --max-new-tokens N (-n, --n-predict as llama.cpp spells it): the tokens to generate, the
// prefill's choice being the first; 1..most.
OptionSpec new_tokens_option(const std::string& help, int most = 1 << 24);
// --cache on|off (or compare, where the command has it): the KV cache; --no-cache, the older
// spelling of --cache off, is read too.
std::vector<OptionSpec> cache_options(bool with_compare);
CacheView cache_from(const CommandLine& c, CacheView fallback);
// --temperature T (--temp), --top-k K, --top-p P, --seed S (-s): the sampler, SamplerConfig's
// defaults when not given.
std::vector<OptionSpec> sampler_options();
SamplerConfig sampler_from(const CommandLine& c);
// --trace-budget SIZE (bytes, or with K, M or G: 512K, 256M): memory for the steps' payloads,
// past which the oldest steps keep only their numbers. --trace-budget-mib N and
// --trace-budget-kib K, the older spellings, are read too.
std::vector<OptionSpec> trace_budget_options(const std::string& default_words);
std::size_t trace_budget_from(const CommandLine& c, std::size_t fallback);
// --context N (-c, --ctx-size): tokens a session may hold, 1..most, with the command's words.
OptionSpec context_option(const std::string& help, int most = 1 << 17);
// --verbose: the details behind a short message (why no GPU was used).
OptionSpec verbose_option();
// --timing-runs N: how many runs of a short step its measured time is the median of; the
// command's default named in the help.
OptionSpec timing_option(int default_runs = 3);

// --weights f32|f16|bf16|q8_0|q4_0|q2_k..q6_k: the type the model's matrices are kept in
// (default none: as the file stores them; core/model/compact_weights.h). A bad name fails with one
// line.
WeightsWanted weights_from(const CommandLine& c);
// --threads N: the CPU backend's threads, 1..256 (default 1).
int threads_from(const CommandLine& c);
// --backend B, one of kernels' names (auto, cpu, cuda, cuda-emulated); `fallback` when not given.
std::string backend_from(const CommandLine& c, const std::string& fallback);
// --timing-runs N, 1..100; `fallback` when not given.
int timing_runs_from(const CommandLine& c, int fallback);

}  // namespace kvs::cmdline
