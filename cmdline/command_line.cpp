#include "cmdline/command_line.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "cmdline/foreign_options.h"
#include "core/util/closest_name.h"
#include "core/util/error.h"

namespace kvs::cmdline {
namespace {

// The option CLI11 names at the start of its message ("--decode: 1 required TEXT missing",
// "prefill was given a disallowed flag override").
std::string option_in(const std::string& message) {
    const std::string name = message.substr(0, message.find_first_of(": "));
    return name.rfind("-", 0) == 0 ? name : "--" + name;  // a flag's is given without "--"
}

// "-m,--model": CLI11's names of an option, every spelling.
std::string spellings(const OptionSpec& s) {
    std::string n;
    for (const auto& a : s.aliases) n += a + ",";
    return n + "--" + s.name;
}

// A value as written on a command line or in settings.txt: digits with an optional leading '-',
// and for a number a decimal point and an exponent; nothing strtol and strtod skip or read besides
// (leading spaces, '+', hex such as 0x10, "inf", "nan"), so every reader of an option takes the
// same texts and the text a message quotes is the number that was used.
bool plain_decimal(const std::string& v, bool fraction) {
    const std::string allowed = fraction ? "0123456789.eE+-" : "0123456789";
    const std::size_t digits_from = !v.empty() && v[0] == '-' ? 1 : 0;
    const std::size_t first = fraction && v.size() > digits_from + 1 && v[digits_from] == '.'
                                  ? digits_from + 1  // .5
                                  : digits_from;
    return v.size() > first && std::isdigit(static_cast<unsigned char>(v[first])) &&
           v.find_first_not_of(allowed, digits_from) == std::string::npos;
}

// A whole number; false when the text is not one (or is beyond a long).
bool read_whole(const std::string& v, long& x) {
    if (!plain_decimal(v, false)) return false;
    char* end = nullptr;
    errno = 0;
    x = std::strtol(v.c_str(), &end, 10);
    return *end == '\0' && errno != ERANGE;
}

bool read_number(const std::string& v, double& x) {
    if (!plain_decimal(v, true)) return false;
    char* end = nullptr;
    x = std::strtod(v.c_str(), &end);
    return *end == '\0' && std::isfinite(x);
}

}  // namespace

ValueRule whole_in(int lo, int hi) {
    return {ValueRule::Kind::Whole, double(lo), double(hi)};
}

ValueRule number_in(double lo, double hi) {
    return {ValueRule::Kind::Number, lo, hi};
}

ValueRule any_unsigned() {
    return {ValueRule::Kind::Unsigned};
}

ValueRule one_of(std::vector<std::string> choices) {
    return {ValueRule::Kind::OneOf, 0, 0, std::move(choices)};
}

ValueRule whole_list_in(int lo, int hi) {
    return {ValueRule::Kind::WholeList, double(lo), double(hi)};
}

ValueRule checked_by(std::string (*check)(const std::string& value), std::string accepts) {
    return {ValueRule::Kind::Checked, 0, 0, {}, check, std::move(accepts)};
}

std::string accepted_values(const ValueRule& rule) {
    std::ostringstream s;
    switch (rule.kind) {
        case ValueRule::Kind::Text:
            break;
        case ValueRule::Kind::Whole:
            s << static_cast<long>(rule.lo) << ".." << static_cast<long>(rule.hi);
            break;
        case ValueRule::Kind::Number:
            s << rule.lo << ".." << rule.hi;
            break;
        case ValueRule::Kind::Unsigned:
            s << "0..2^64-1";
            break;
        case ValueRule::Kind::OneOf:
            for (std::size_t i = 0; i < rule.choices.size(); ++i)
                s << (i ? " | " : "") << rule.choices[i];
            break;
        case ValueRule::Kind::Checked:
            s << rule.accepts;
            break;
        case ValueRule::Kind::WholeList:
            s << "N,N,... each " << static_cast<long>(rule.lo) << ".."
              << static_cast<long>(rule.hi);
            break;
    }
    return s.str();
}

std::string value_problem(const ValueRule& rule, const std::string& v) {
    switch (rule.kind) {
        case ValueRule::Kind::Text:
            return {};
        case ValueRule::Kind::Whole: {
            long x = 0;
            if (!read_whole(v, x)) return "'" + v + "' is not a whole number";
            if (x < rule.lo || x > rule.hi)
                return v + " is out of range (" + std::to_string(static_cast<long>(rule.lo)) +
                       ".." + std::to_string(static_cast<long>(rule.hi)) + ")";
            return {};
        }
        case ValueRule::Kind::Number: {
            double x = 0;
            if (!read_number(v, x)) return "'" + v + "' is not a number";
            if (x < rule.lo || x > rule.hi) {
                std::ostringstream s;
                s << v << " is out of range (" << rule.lo << ".." << rule.hi << ")";
                return s.str();
            }
            return {};
        }
        case ValueRule::Kind::Unsigned: {
            // Digits only: strtoull would take "-1" as 2^64-1, strtod "1.5" as a number.
            const bool digits = !v.empty() && v.size() <= 20 &&
                                v.find_first_not_of("0123456789") == std::string::npos;
            errno = 0;
            if (digits) std::strtoull(v.c_str(), nullptr, 10);
            if (!digits || errno == ERANGE)
                return "'" + v + "' is not a whole number from 0 to 18446744073709551615";
            return {};
        }
        case ValueRule::Kind::OneOf: {
            std::string list;
            for (const auto& c : rule.choices) {
                if (v == c) return {};
                list += (list.empty() ? "" : ", ") + c;
            }
            return "'" + v + "' is not one of " + list;
        }
        case ValueRule::Kind::Checked:
            return rule.check ? rule.check(v) : std::string();
        case ValueRule::Kind::WholeList: {
            if (v.empty() || v.front() == ',' || v.back() == ',')
                return "'" + v + "' is not a list of whole numbers (e.g. 32,64)";
            std::stringstream ss(v);
            std::string item;
            while (std::getline(ss, item, ',')) {
                const ValueRule one =
                    whole_in(static_cast<int>(rule.lo), static_cast<int>(rule.hi));
                if (std::string why = value_problem(one, item); !why.empty()) return why;
            }
            return {};
        }
    }
    return {};
}

const OptionSpec* find_option(const std::vector<OptionSpec>& specs, const std::string& name) {
    for (const auto& s : specs)
        if (s.name == name) return &s;
    return nullptr;
}

CommandLine::CommandLine(Voice voice, std::vector<OptionSpec> specs, int argc, char** argv,
                         int first, std::string positional)
    : voice_(std::move(voice)), specs_(std::move(specs)) {
    std::vector<std::string> given;
    for (int i = first; i < argc; ++i) given.emplace_back(argv[i]);
    given = screened(given);
    CLI::App app;
    app.set_help_flag();  // --help is ours: a flag like any other, printed by the caller
    app.allow_extras();   // unknown options and stray words are reported below, in our words
    CLI::Option* help = app.add_flag("-h,--help");
    CLI::Option* version = app.add_flag("--version");
    std::vector<std::pair<const OptionSpec*, CLI::Option*>> options;
    for (const auto& s : specs_) {
        CLI::Option* o = nullptr;
        if (s.value_name.empty()) {
            o = app.add_flag(spellings(s))->disable_flag_override();  // --prefill=yes: refused
        } else {
            // The last of a repeated option wins, as in most command lines.
            o = app.add_option(spellings(s))->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        }
        options.emplace_back(&s, o);
    }
    // CLI11 parses from the end of a vector of the arguments in reverse order.
    std::vector<std::string> args(given.rbegin(), given.rend());
    try {
        app.parse(args);
    } catch (const CLI::ArgumentMismatch& e) {
        const std::string what = e.what(), name = option_in(what);
        if (what.find("flag override") != std::string::npos) fail(name + " takes no value");
        fail(name + " needs a value");
    } catch (const CLI::ParseError& e) {
        fail(e.what());
    }
    std::string word;  // the positional's value
    bool has_word = false;
    for (const std::string& a : app.remaining()) {
        if (a.size() > 1 && a[0] == '-') unknown_option(a);
        if (positional.empty() || has_word)
            fail("unexpected argument '" + a + "'" +
                 (voice_.suffix.empty() ? " (see --help)" : ""));
        word = a;
        has_word = true;
    }
    help_ = help->count() > 0;
    version_ = version->count() > 0;
    for (const auto& [spec, o] : options) {
        if (o->count() == 0) continue;
        if (spec->value_name.empty()) {
            values_[spec->name] = "1";
            continue;
        }
        const std::string v = o->results().back();
        // `--model ""` (an unset shell variable) names no file: say which option, not what the
        // empty name failed as later.
        if (v.empty() && !spec->empty_ok)
            fail("--" + spec->name + " needs a value, not an empty string");
        // Every value against its option's rule, whoever reads it: what --help lists is what
        // is taken.
        if (const std::string why = value_problem(spec->value, v); !why.empty())
            fail("--" + spec->name + ": " + why);
        values_[spec->name] = v;
    }
    if (has_word) {
        if (values_.count(positional))
            fail("'" + word + "' and --" + positional + " " + values_[positional] +
                 " both give the " + positional + ": give one");
        if (word.empty()) fail("an empty argument names no " + positional);
        if (const OptionSpec* spec = find_option(specs_, positional))
            if (const std::string why = value_problem(spec->value, word); !why.empty()) fail(why);
        values_[positional] = word;
    }
}

bool CommandLine::known_spelling(const std::string& arg) const {
    const std::string name = arg.substr(0, arg.find('='));
    if (name == "-h" || name == "--help" || name == "--version") return true;
    return spelled(name) != nullptr;
}

const OptionSpec* CommandLine::spelled(const std::string& name) const {
    for (const auto& s : specs_) {
        if (name == "--" + s.name) return &s;
        for (const auto& a : s.aliases)
            if (name == a) return &s;
    }
    return nullptr;
}

std::vector<std::string> CommandLine::screened(const std::vector<std::string>& args) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {  // the rest are words, whatever they look like
            out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
            break;
        }
        const std::string name = a.substr(0, a.find('='));
        if (const OptionSpec* own = spelled(name)) {
            out.push_back(a);
            // `--csv -p hi`: the value forgotten, the next option would be taken as the file.
            if (!own->value_name.empty() && name == a && i + 1 < args.size()) {
                const std::string& v = args[++i];
                if (known_spelling(v) || find_foreign_option(v))
                    fail(name + " needs a value (" + v + " is an option)");
                out.push_back(v);
            }
            continue;
        }
        const bool dashed = a.size() > 1 && a[0] == '-' &&
                            !std::isdigit(static_cast<unsigned char>(a[1])) && a[1] != '.';
        if (dashed && !known_spelling(a)) {
            if (const ForeignOption* f = find_foreign_option(a)) {
                const auto eq = a.find('=');
                std::string v = eq == std::string::npos ? "" : a.substr(eq + 1);
                const bool next_is_value =
                    f->takes_value && eq == std::string::npos && i + 1 < args.size() &&
                    !(args[i + 1].size() > 1 && args[i + 1][0] == '-' &&
                      !std::isdigit(static_cast<unsigned char>(args[i + 1][1])));
                if (next_is_value) v = args[i + 1];
                if (!f->answer) {  // understood, and nothing to do here
                    i += next_is_value ? 1 : 0;
                    continue;
                }
                fail(name + (v.empty() ? "" : " " + v) + ": " + f->answer(v));
            }
            // One dash and a word (llama.cpp's -ngl, -no-cnv) is one option, never a short
            // option with its value run on (`-n gl`).
            if (a[1] != '-' && a.size() > 2) unknown_option(a);
        }
        out.push_back(a);
    }
    return out;
}

void CommandLine::unknown_option(const std::string& arg) const {
    Voice v = voice_;
    std::string hint = v.suffix.empty() ? " (see --help)" : "";
    const std::string given = arg.substr(0, arg.find('='));
    std::vector<std::string> known = {"--help", "--version"};
    for (const auto& s : specs_) {
        known.push_back("--" + s.name);
        known.insert(known.end(), s.aliases.begin(), s.aliases.end());
    }
    // A long name gets a guess within two edits, or three past ten letters.
    const std::string near =
        given.size() > 2 ? closest_name(given, known, given.size() > 10 ? 3 : 2) : "";
    if (!near.empty()) {
        v.suffix.clear();  // one hint is enough
        hint = " (did you mean " + near + "?)";
    }
    throw Error(v.prefix + "unknown option '" + given + "'" + hint + v.suffix);
}

void CommandLine::fail(const std::string& what) const {
    throw Error(voice_.prefix + what + voice_.suffix);
}

std::string CommandLine::usage() const {
    std::ostringstream s;
    s << voice_.usage_line << "\n";
    auto line = [&](const std::string& left, const std::string& help) {
        // A name wider than its column puts its text on the next line, under the others'.
        s << "  " << left;
        if (left.size() < 26)
            s << std::string(26 - left.size(), ' ');
        else
            s << "\n" << std::string(28, ' ');
        for (char c : help) {
            s << c;
            if (c == '\n') s << std::string(28, ' ');
        }
        s << "\n";
    };
    for (const auto& o : specs_) {
        if (o.hidden) continue;
        std::string names;
        for (const auto& a : o.aliases) names += a + ", ";
        // What the value may be, from the rule the readers check it with, then what it does.
        const std::string values = accepted_values(o.value);
        std::string text = o.help;
        if (!values.empty()) {
            const std::string first = o.help.substr(0, o.help.find('\n'));
            // Past about 72 columns the values take a line of their own.
            const std::string joint = values.size() + 2 + first.size() > 72 ? ":\n"
                                      : !o.help.empty() && o.help[0] == '(' ? " "
                                                                            : ": ";
            text = o.help.empty() ? values : values + joint + o.help;
        }
        line(names + "--" + o.name + (o.value_name.empty() ? "" : " " + o.value_name), text);
    }
    line("--help", "this text");
    line("--version", "the program's version");
    return s.str();
}

std::string CommandLine::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

int CommandLine::whole(const std::string& name, const std::string& v, int lo, int hi) const {
    if (const std::string why = value_problem(whole_in(lo, hi), v); !why.empty())
        fail("--" + name + ": " + why);
    return static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
}

std::uint64_t CommandLine::unsigned_integer(const std::string& name, std::uint64_t fallback) const {
    const OptionSpec* spec = find_option(specs_, name);
    if (!spec || spec->value.kind != ValueRule::Kind::Unsigned)
        throw std::logic_error("--" + name + " has no unsigned rule");
    return has(name) ? std::strtoull(checked(name, {}).c_str(), nullptr, 10) : fallback;
}

std::vector<int> CommandLine::int_list(const std::string& name, std::vector<int> fallback) const {
    const OptionSpec* spec = find_option(specs_, name);
    if (!spec || spec->value.kind != ValueRule::Kind::WholeList)
        throw std::logic_error("--" + name + " has no whole-list rule");
    if (!has(name)) return fallback;
    std::vector<int> out;
    std::stringstream ss(checked(name, {}));
    std::string item;
    while (std::getline(ss, item, ','))
        out.push_back(static_cast<int>(std::strtol(item.c_str(), nullptr, 10)));
    return out;
}

std::string CommandLine::checked(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    const OptionSpec* spec = find_option(specs_, name);
    if (const std::string why = spec ? value_problem(spec->value, it->second) : ""; !why.empty())
        fail("--" + name + ": " + why);
    return it->second;
}

int CommandLine::integer(const std::string& name, int fallback) const {
    const OptionSpec* spec = find_option(specs_, name);
    if (!spec || spec->value.kind != ValueRule::Kind::Whole)
        throw std::logic_error("--" + name + " has no whole-number rule");
    return has(name) ? static_cast<int>(std::strtol(checked(name, {}).c_str(), nullptr, 10))
                     : fallback;
}

int CommandLine::integer_within(const std::string& name, int fallback, int lo, int hi,
                                const std::string& what) const {
    const int v = integer(name, fallback);
    if (has(name) && (v < lo || v > hi))
        fail("--" + name + ": " + str(name) + " is out of range (" + std::to_string(lo) + ".." +
             std::to_string(hi) + ": " + what + ")");
    return v;
}

double CommandLine::number(const std::string& name, double fallback) const {
    const OptionSpec* spec = find_option(specs_, name);
    if (!spec || spec->value.kind != ValueRule::Kind::Number)
        throw std::logic_error("--" + name + " has no number rule");
    return has(name) ? std::strtod(checked(name, {}).c_str(), nullptr) : fallback;
}

}  // namespace kvs::cmdline
