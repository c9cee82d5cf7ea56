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

// What an option's value must be, stated once with the option: the typed readers below check a
// given value against it, and the window's settings file reads its saved values through the same
// rule (gui/state/settings.h), so a value one refuses the other refuses too.
struct ValueRule {
    enum class Kind {
        Text,       // any text
        Whole,      // a whole number in lo..hi
        Number,     // a finite number in lo..hi
        Unsigned,   // a whole number from 0 to 2^64-1
        OneOf,      // one of `choices`
        Checked,    // what `check` accepts
        WholeList,  // whole numbers in lo..hi, comma-separated
    };
    Kind kind = Kind::Text;
    double lo = 0, hi = 0;
    std::vector<std::string> choices = {};
    // "" when `value` is good, else why not (e.g. "unknown backend 'x' (choose ...)").
    std::string (*check)(const std::string& value) = nullptr;
    // What a Checked rule takes, in the help's words ("1K..1024G", "f32 | f16 | ...").
    std::string accepts = {};
};
ValueRule whole_in(int lo, int hi);
ValueRule number_in(double lo, double hi);
ValueRule any_unsigned();
ValueRule one_of(std::vector<std::string> choices);
ValueRule whole_list_in(int lo, int hi);
ValueRule checked_by(std::string (*check)(const std::string& value), std::string accepts);
// What `rule` accepts, as every help line says it: "a | b | c", "1..256", "0..1", "" for any text.
// Generated from the rule the readers check with, so a help never lists a value the option
// refuses, nor leaves out one it takes.
std::string accepted_values(const ValueRule& rule);
// "" when `value` is what `rule` allows, else why not in the command line's words, without the
// option's name: "'x' is not a whole number", "9 is out of range (0.5..4)", "'pink' is not one of
// light, dark".
std::string value_problem(const ValueRule& rule, const std::string& value);

struct OptionSpec {
    std::string name;        // without the leading "--"
    std::string value_name;  // empty for a flag
    // What it does, without the values it takes: the help line puts accepted_values(value) before
    // it ("auto | cpu | cuda | cuda-emulated (default auto)", "1..256: CPU backend threads").
    // May hold '\n': continuation lines are indented under the text.
    std::string help;
    bool empty_ok = false;  // only a prompt may be "": for any other `--x ""` is an unset variable
    // Other spellings of the same option, with their dashes ("-m", "--n-predict"): read as
    // `name` and listed on its help line (llama.cpp's short names, an older spelling).
    std::vector<std::string> aliases = {};
    // An older spelling whose value means something else (--trace-budget-kib beside
    // --trace-budget): read by the option's reader, not listed in --help (docs/cli.md lists it).
    bool hidden = false;
    // What its value must be (a flag's: nothing); the readers without a range take it from here.
    ValueRule value = {};
};

// The option named `name` (without "--") in `specs`; null when there is none.
const OptionSpec* find_option(const std::vector<OptionSpec>& specs, const std::string& name);

// How a program names itself in its messages and its help.
struct Voice {
    std::string usage_line;  // the first line of --help, e.g. "usage: kvscope [options]"
    std::string prefix;      // before each message, e.g. "generate: "
    std::string suffix;      // after each message, e.g. " (see kvscope --help)"
};

class CommandLine {
  public:
    // Parses argv[first..argc). Throws kvs::Error for an unknown option (naming the nearest
    // known one, or the kvscope spelling of another program's: cmdline/foreign_options.h), an
    // unexpected argument, a missing or empty value, a value given to a flag, or another option
    // where a value belongs (`--csv -p hi`). `positional`, when not empty, names the option one
    // word without a dash gives (`info model.gguf` is `info --model model.gguf`), anywhere on the
    // line; giving it both ways is an error.
    CommandLine(Voice voice, std::vector<OptionSpec> specs, int argc, char** argv, int first,
                std::string positional = {});

    bool help() const { return help_; }
    bool version() const { return version_; }  // --version
    std::string usage() const;                 // usage line, then one line per option
    const std::vector<OptionSpec>& specs() const { return specs_; }
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string str(const std::string& name, const std::string& fallback = {}) const;
    std::uint64_t unsigned_integer(const std::string& name, std::uint64_t fallback) const;
    std::vector<int> int_list(const std::string& name, std::vector<int> fallback) const;
    // The value checked against the option's own rule (OptionSpec::value), converted; `fallback`
    // when the option is not given.
    int integer(const std::string& name, int fallback) const;
    // The same, then within lo..hi, a narrower range known only at run time (a layer of the model
    // opened): "--layer: 9 is out of range (0..3: WHAT)".
    int integer_within(const std::string& name, int fallback, int lo, int hi,
                       const std::string& what) const;
    double number(const std::string& name, double fallback) const;
    std::string checked(const std::string& name, const std::string& fallback) const;

    // The checks on a piece of a value (e.g. the W of --size WxH).
    int whole(const std::string& name, const std::string& text, int lo, int hi) const;
    // A kvs::Error in this program's voice.
    [[noreturn]] void fail(const std::string& what) const;

  private:
    // The arguments with other programs' options answered (an error naming the kvscope
    // equivalent) or dropped (-no-cnv), and an option refused where a value belongs.
    std::vector<std::string> screened(const std::vector<std::string>& args) const;
    const OptionSpec* spelled(const std::string& name) const;  // by any of its spellings
    bool known_spelling(const std::string& arg) const;         // an option here, or --help
    [[noreturn]] void unknown_option(const std::string& arg) const;

    Voice voice_;
    std::vector<OptionSpec> specs_;
    std::map<std::string, std::string> values_;  // given options; a flag's value is "1"
    bool help_ = false;
    bool version_ = false;
};

}  // namespace kvs::cmdline
