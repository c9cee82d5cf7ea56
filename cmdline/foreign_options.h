#pragma once
// Options people type from other programs (llama.cpp's llama-cli, Hugging Face transformers'
// generate, vLLM) that kvscope spells another way or has no use for. Each is answered in one line
// with the kvscope equivalent, the value translated where there is one (`--dtype float16` ->
// `--weights f16`), instead of "unknown option" or, worse, a misreading: llama.cpp's `-ngl 99`
// would otherwise parse as `-n gl`, and `-no-cnv` as `-n o-cnv`.
#include <string>
#include <vector>

namespace kvs::cmdline {

struct ForeignOption {
    std::vector<std::string> spellings;  // with their dashes: "-ngl", "--n-gpu-layers"
    bool takes_value = false;
    // The answer, from the value given ("" for a flag or a value not given): one line saying
    // what kvscope calls it, without the option's name (the caller puts "--dtype float16: "
    // before it). Empty for an option that is understood and dropped.
    std::string (*answer)(const std::string& value) = nullptr;
};

// The options of the table above whose spelling is `arg` (up to an '='); null when none is.
const ForeignOption* find_foreign_option(const std::string& arg);

// Every entry, for the tests and for docs/cli.md's table.
const std::vector<ForeignOption>& foreign_options();

// A command that is not kvscope-cli's but another program's (`run`, `chat`, `serve`'s cousins):
// the kvscope command to use, in one line; "" when `command` is none of them.
std::string foreign_command_answer(const std::string& command);

}  // namespace kvs::cmdline
