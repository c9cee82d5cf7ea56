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
    Args(const std::string& command, std::vector<OptionSpec> specs, int argc, char** argv,
         int first)
        : CommandLine({"usage: kvscope-cli " + command + " [options]", command + ": ", ""},
                      std::move(specs), argc, argv, first) {}
};

}  // namespace kvs::cli
