#include "cmdline/command_line.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

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

ValueRule checked_by(std::string (*check)(const std::string& value)) {
    return {ValueRule::Kind::Checked, 0, 0, {}, check};
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
    }
    return {};
}

const OptionSpec* find_option(const std::vector<OptionSpec>& specs, const std::string& name) {
    for (const auto& s : specs)
        if (s.name == name) return &s;
    return nullptr;
}

CommandLine::CommandLine(Voice voice, std::vector<OptionSpec> specs, int argc, char** argv,
                         int first)
    : voice_(std::move(voice)), specs_(std::move(specs)) {
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
    std::vector<std::string> args;
    for (int i = argc - 1; i >= first; --i) args.emplace_back(argv[i]);
    try {
        app.parse(args);
    } catch (const CLI::ArgumentMismatch& e) {
        const std::string what = e.what(), name = option_in(what);
        if (what.find("flag override") != std::string::npos) fail(name + " takes no value");
        fail(name + " needs a value");
    } catch (const CLI::ParseError& e) {
        fail(e.what());
    }
    const auto rest = app.remaining();
    if (!rest.empty()) {
        const std::string& a = rest.front();
        std::string hint = voice_.suffix.empty() ? " (see --help)" : "";
        if (a.size() > 1 && a[0] == '-') {
            const std::string given = a.substr(0, a.find('='));
            std::vector<std::string> known = {"--help", "--version"};
            for (const auto& s : specs_) {
                known.push_back("--" + s.name);
                known.insert(known.end(), s.aliases.begin(), s.aliases.end());
            }
            // A long name gets a guess within two edits, or three past ten letters.
            const std::string near =
                given.size() > 2 ? closest_name(given, known, given.size() > 10 ? 3 : 2) : "";
            if (!near.empty()) {
                voice_.suffix.clear();  // one hint is enough
                hint = " (did you mean " + near + "?)";
            }
            fail("unknown option '" + given + "'" + hint);
        }
        fail("unexpected argument '" + a + "'" + hint);
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
        values_[spec->name] = v;
    }
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
        line(names + "--" + o.name + (o.value_name.empty() ? "" : " " + o.value_name), o.help);
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

int CommandLine::integer(const std::string& name, int fallback, int lo, int hi) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : whole(name, it->second, lo, hi);
}

std::uint64_t CommandLine::unsigned_integer(const std::string& name, std::uint64_t fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    if (const std::string why = value_problem(any_unsigned(), it->second); !why.empty())
        fail("--" + name + ": " + why);
    return std::strtoull(it->second.c_str(), nullptr, 10);
}

double CommandLine::number(const std::string& name, double fallback, double lo, double hi) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    if (const std::string why = value_problem(number_in(lo, hi), it->second); !why.empty())
        fail("--" + name + ": " + why);
    return std::strtod(it->second.c_str(), nullptr);
}

std::vector<int> CommandLine::int_list(const std::string& name, std::vector<int> fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    std::vector<int> out;
    std::stringstream ss(it->second);
    std::string item;
    while (std::getline(ss, item, ',')) {
        long x = 0;
        if (!read_whole(item, x) || x <= 0 || x > (1 << 20))
            fail("--" + name + ": '" + item + "' is not a positive whole number");
        out.push_back(static_cast<int>(x));
    }
    if (out.empty()) fail("--" + name + " is empty");
    return out;
}

std::string CommandLine::choice(const std::string& name, const std::string& fallback,
                                std::initializer_list<const char*> allowed) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    if (const std::string why = value_problem(one_of({allowed.begin(), allowed.end()}), it->second);
        !why.empty())
        fail("--" + name + ": " + why);
    return it->second;
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

double CommandLine::number(const std::string& name, double fallback) const {
    const OptionSpec* spec = find_option(specs_, name);
    if (!spec || spec->value.kind != ValueRule::Kind::Number)
        throw std::logic_error("--" + name + " has no number rule");
    return has(name) ? std::strtod(checked(name, {}).c_str(), nullptr) : fallback;
}

}  // namespace kvs::cmdline
