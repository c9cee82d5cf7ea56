#pragma once
// Shared test fixtures: synthetic llama2.c files, temporary directories, running the CLI.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_config.h"

namespace kvs::test {

std::string shared_dir();     // ../shared beside the clone (may not exist)
std::string stories_model();  // ../shared/models/stories260K.bin
std::string stories_tokenizer();

// A fresh, empty directory under the system temp dir, removed at exit.
std::filesystem::path temp_dir(const std::string& tag);

// Bytes of a llama2.c checkpoint with deterministic pseudo-random weights.
std::vector<unsigned char> synthetic_checkpoint(const ModelConfig& c, std::uint32_t seed = 1);
// A small model: dim 16, hidden 40, 2 layers, 4 heads, 2 kv heads, vocab 300, context 64.
ModelConfig tiny_config();
// Bytes of a llama2.c tokenizer: <unk>, <s>, </s>, 256 byte pieces, then `pieces` (scores
// descending in order, so earlier pieces merge first).
std::vector<unsigned char> synthetic_tokenizer(const std::vector<std::string>& pieces,
                                               int total_vocab);
// Writes tiny_config() model + tokenizer to DIR/tiny.bin and DIR/tiny.tok.bin; returns model path.
std::string write_tiny_model(const std::filesystem::path& dir);
// That model written under temp_dir(tag) and opened: the fixture most suites start from.
std::unique_ptr<Model> open_tiny_model(const std::string& tag);
// That model written once for the whole process, on first use: its path (the suites only read it).
const std::string& tiny_model();
// That model opened once for the whole process, on first use (the suites only read it).
const Model& shared_tiny_model();
// The llama2.c models to check: the default model always, stories260K when ../shared has it.
std::vector<std::unique_ptr<Model>> llama2c_models();
void write_file(const std::filesystem::path& p, const std::vector<unsigned char>& bytes);

// Whether `s` is one line ending in '\n': what a refusal prints on stderr.
bool one_line(const std::string& s);
// `s` in single quotes for sh, so any bytes pass through a command line unchanged.
std::string quote(const std::string& s);
// A whole file as bytes ("" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

struct RunResult {
    int exit_code = -1;
    std::string out, err;
    long peak_rss_kib = -1;  // run_cli_measured only: the CLI process's own peak resident memory
};
// Runs kvscope-cli with `args` (shell-quoted here), capturing stdout and stderr; `input`, when
// given, is its standard input.
RunResult run_cli(const std::vector<std::string>& args, const std::string* input = nullptr);
// The same without a shell between (the CLI is this process's child), with its peak resident
// memory from wait4's rusage: what a file made the CLI allocate.
RunResult run_cli_measured(const std::vector<std::string>& args);
// The same with environment variables set for it ("NAME=VALUE").
RunResult run_cli_env(const std::vector<std::string>& env, const std::vector<std::string>& args,
                      const std::string* input = nullptr);

}  // namespace kvs::test
