#pragma once
// Checks on an option table (cmdline/command_line.h): its help lists what each option accepts,
// and what it lists is what the command line takes. Shared by the CLI's and the window's tests.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cmdline/command_line.h"
#include "core/util/error.h"

namespace kvs::test {

// Why `args` (after a program name) do not parse, "" when they do; `positional` as the command
// takes its one word.
inline std::string parse_problem(const std::vector<cmdline::OptionSpec>& specs,
                                 std::vector<std::string> args,
                                 const std::string& positional = {}) {
    std::vector<char*> argv;
    static char program[] = "program";
    argv.push_back(program);
    for (auto& a : args) argv.push_back(a.data());
    try {
        cmdline::CommandLine c({"usage", "", ""}, specs, static_cast<int>(argv.size()), argv.data(),
                               1, positional);
        return {};
    } catch (const Error& e) {
        return e.what();
    }
}

// The values of "a | b | c"; none for a range or a text.
inline std::vector<std::string> listed(const std::string& accepts) {
    std::vector<std::string> out;
    if (accepts.find(" | ") == std::string::npos) return out;
    for (std::size_t at = 0;;) {
        const auto end = accepts.find(" | ", at);
        out.push_back(accepts.substr(at, end == std::string::npos ? end : end - at));
        if (end == std::string::npos) return out;
        at = end + 3;
    }
}

inline void check_option_table(const std::string& program,
                               const std::vector<cmdline::OptionSpec>& specs) {
    static char name[] = "program";
    char* argv[] = {name};
    const std::string usage = cmdline::CommandLine({"usage", "", ""}, specs, 1, argv, 1).usage();
    for (const auto& o : specs) {
        if (o.value_name.empty()) continue;  // a flag
        const std::string accepts = cmdline::accepted_values(o.value);
        INFO(program << " --" << o.name << " (" << accepts << ")");
        if (!o.hidden && !accepts.empty()) CHECK(usage.find(accepts) != std::string::npos);
        // Every value the help lists is taken; one beside them is refused with the option named.
        for (const auto& v : listed(accepts)) CHECK(parse_problem(specs, {"--" + o.name, v}) == "");
        if (!listed(accepts).empty())
            CHECK(parse_problem(specs, {"--" + o.name, "not-listed"}).find("--" + o.name) !=
                  std::string::npos);
        if (o.value.kind == cmdline::ValueRule::Kind::Whole ||
            o.value.kind == cmdline::ValueRule::Kind::Number) {
            // The ends the help names are taken, one past either end is not.
            const auto dots = accepts.find("..");
            const std::string lo = accepts.substr(0, dots), hi = accepts.substr(dots + 2);
            const auto past = [](double x) {
                std::ostringstream s;
                s << x;
                return s.str();
            };
            CHECK(parse_problem(specs, {"--" + o.name, lo}) == "");
            CHECK(parse_problem(specs, {"--" + o.name, hi}) == "");
            CHECK(parse_problem(specs, {"--" + o.name, past(o.value.lo - 1)}) != "");
            CHECK(parse_problem(specs, {"--" + o.name, past(o.value.hi + 1)}) != "");
        }
        // A value named as a number, a count or a size has a rule that says which.
        const bool numeric = o.value_name == "N" || o.value_name == "K" || o.value_name == "L" ||
                             o.value_name == "H" || o.value_name == "R" || o.value_name == "W" ||
                             o.value_name == "T" || o.value_name == "P" || o.value_name == "S" ||
                             o.value_name == "Z" || o.value_name == "SIZE";
        if (numeric) CHECK(o.value.kind != cmdline::ValueRule::Kind::Text);
    }
}

}  // namespace kvs::test
