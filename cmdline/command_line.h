#pragma once
// One command line, parsed by CLI11 (Debian's libcli11-dev) for both programs: kvscope-cli's
// subcommands and the kvscope window. CLI11 splits argv (--name VALUE, --name=VALUE, flags,
// unknown options, missing values); the typed readers below check each value the same way in
// both programs. Every problem is a kvs::Error of one line: `prefix` + what + `suffix`, which
// the program prints before exiting with 2.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace kvs::cmdline {

struct OptionSpec {
    std::string name;        // without the leading "--"
    std::string value_name;  // empty for a flag
    std::string help;        // may hold '\n': continuation lines are indented under the text
    bool empty_ok = false;   // only a prompt may be "": for any other `--x ""` is an unset variable
    // Other spellings of the same option, with their dashes ("-m", "--n-predict"): read as
    // `name` and listed on its help line (llama.cpp's short names, an older spelling).
    std::vector<std::string> aliases = {};
    // An older spelling whose value means something else (--trace-budget-kib beside
    // --trace-budget): read by the option's reader, not listed in --help (docs/cli.md lists it).
    bool hidden = false;
};

// How a program names itself in its messages and its help.
struct Voice {
    std::string usage_line;  // the first line of --help, e.g. "usage: kvscope [options]"
    std::string prefix;      // before each message, e.g. "generate: "
    std::string suffix;      // after each message, e.g. " (see kvscope --help)"
};

class CommandLine {
  public:
    // Parses argv[first..argc). Throws kvs::Error for an unknown option (naming the nearest
    // known one), an unexpected argument, a missing or empty value, or a value given to a flag.
    CommandLine(Voice voice, std::vector<OptionSpec> specs, int argc, char** argv, int first);

    bool help() const { return help_; }
    bool version() const { return version_; }  // --version
    std::string usage() const;                 // usage line, then one line per option
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string str(const std::string& name, const std::string& fallback = {}) const;
    int integer(const std::string& name, int fallback, int lo, int hi) const;
    std::uint64_t unsigned_integer(const std::string& name, std::uint64_t fallback) const;
    double number(const std::string& name, double fallback, double lo, double hi) const;
    std::vector<int> int_list(const std::string& name, std::vector<int> fallback) const;
    // The value when it is one of `allowed`, else an error listing them.
    std::string choice(const std::string& name, const std::string& fallback,
                       std::initializer_list<const char*> allowed) const;

    // The checks on a piece of a value (e.g. the W of --size WxH).
    int whole(const std::string& name, const std::string& text, int lo, int hi) const;
    // A kvs::Error in this program's voice.
    [[noreturn]] void fail(const std::string& what) const;

  private:
    Voice voice_;
    std::vector<OptionSpec> specs_;
    std::map<std::string, std::string> values_;  // given options; a flag's value is "1"
    bool help_ = false;
    bool version_ = false;
};

}  // namespace kvs::cmdline
