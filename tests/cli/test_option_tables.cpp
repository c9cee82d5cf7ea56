// Every kvscope-cli command's option table: its help lists what each option accepts (generated
// from the rule the command line checks with), every listed value is taken and nothing beside
// them; a command that takes a model takes -m and the model as its one word.
#include <algorithm>
#include <catch2/catch.hpp>

#include "cli/commands.h"
#include "tests/support/option_table_checks.h"

using namespace kvs;

TEST_CASE("every command's help lists what its options accept", "[cli][options]") {
    for (const auto& c : cli::commands()) test::check_option_table(c.name, c.options());
}

TEST_CASE("every command that takes a model takes -m and the model as its word", "[cli][options]") {
    int with_model = 0;
    for (const auto& c : cli::commands()) {
        const auto specs = c.options();
        const cmdline::OptionSpec* m = cmdline::find_option(specs, "model");
        if (!m) continue;
        ++with_model;
        INFO(c.name);
        CHECK(std::find(m->aliases.begin(), m->aliases.end(), "-m") != m->aliases.end());
        REQUIRE(c.positional != nullptr);
        CHECK(std::string(c.positional) == "model");
        CHECK(test::parse_problem(specs, {"some-model.gguf"}, c.positional).empty());
    }
    CHECK(with_model == 10);  // all but toy and make-model (no file), lesson and replay (theirs)
}
