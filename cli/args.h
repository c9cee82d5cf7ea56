#pragma once
// A subcommand's command line: cmdline::CommandLine (CLI11) in the subcommand's voice. Anything
// unknown or malformed is a kvs::Error "COMMAND: ..." of one line; main() turns it into exit 2.
#include <string>
#include <vector>

#include "cmdline/command_line.h"

namespace kvs::cli {

using cmdline::OptionSpec;

class Args : public cmdline::CommandLine {
  public:
    // `positional`: the option one word without a dash gives (cmdline::CommandLine), shown in
    // the usage line as `word` ("[MODEL]", "TRACE.json").
    Args(const std::string& command, std::vector<OptionSpec> specs, int argc, char** argv,
         int first, const std::string& positional = {}, const std::string& word = {})
        : CommandLine(
              {"usage: kvscope-cli " + command + (word.empty() ? "" : " " + word) + " [options]",
               command + ": ", ""},
              std::move(specs), argc, argv, first, positional) {}
};

// The command line of a command that opens a model: the model as --model, -m or its one word.
inline Args model_args(const std::string& command, std::vector<OptionSpec> specs, int argc,
                       char** argv) {
    return Args(command, std::move(specs), argc, argv, 2, "model", "[MODEL]");
}

}  // namespace kvs::cli
