// @expect checks: arithmetic, comparisons, tolerances, strings and none, and evaluation errors
// that fail the check instead of throwing.
#include <catch2/catch.hpp>
#include <map>

#include "core/util/error.h"
#include "lessonlib/lesson_expr.h"

using namespace kvs;

namespace {

// Metrics of a pretend session: x = 3, y = 0.5, word = "nice", nothing = none; f(a, b) = a - b.
LessonValue fake(const std::string& name, const std::vector<LessonValue>& args) {
    if (name == "x") return LessonValue::number(3);
    if (name == "y") return LessonValue::number(0.5);
    if (name == "word") return LessonValue::string("nice");
    if (name == "nothing") return LessonValue::none();
    if (name == "f") return LessonValue::number(args.at(0).num - args.at(1).num);
    throw Error("cannot read " + name + " now");
}

Expectation::Outcome check(const std::string& text) {
    return Expectation::parse(text, {}).evaluate(fake);
}

}  // namespace

TEST_CASE("@expect arithmetic follows the usual precedence", "[lesson]") {
    CHECK(check("1 + 2 * 3 == 7").pass);
    CHECK(check("(1 + 2) * 3 == 9").pass);
    CHECK(check("-x + 10 == 7").pass);
    CHECK(check("31/3 == 10.333333 within 1e-6").pass);
    CHECK_FALSE(check("31/3 == 10.33 within 1e-6").pass);
    CHECK(check("f(x, 1) == 2").pass);
    CHECK(check("f(x * 2, y + .5) == 5").pass);
    CHECK(check("2e-3 < 0.01").pass);
}

TEST_CASE("@expect comparisons", "[lesson]") {
    CHECK(check("x > y").pass);
    CHECK(check("x >= 3").pass);
    CHECK(check("x <= 3").pass);
    CHECK_FALSE(check("x < 3").pass);
    CHECK(check("x != y").pass);
    CHECK(check("x != 3.1 within 0.05").pass);
    CHECK_FALSE(check("x != 3.01 within 0.05").pass);
    const auto o = check("x == 4");
    CHECK_FALSE(o.pass);
    CHECK(o.why == "got 3 against 4");
    CHECK(o.lhs.num == 3);
}

TEST_CASE("@expect strings and none", "[lesson]") {
    CHECK(check("word == \"nice\"").pass);
    CHECK(check("word != \"warm\"").pass);
    CHECK(check("nothing == none").pass);
    CHECK_FALSE(check("x == none").pass);  // a number is never none
    CHECK(check("x != none").pass);
    CHECK_FALSE(check("word == none").pass);
    const auto o = check("word == \"warm\"");
    CHECK(o.why == "got \"nice\" against \"warm\"");
}

TEST_CASE("@expect evaluation errors fail the check with a reason", "[lesson]") {
    auto o = check("missing == 1");
    CHECK_FALSE(o.pass);
    CHECK(o.why == "cannot read missing now");
    o = check("word + 1 == 2");
    CHECK_FALSE(o.pass);
    CHECK(o.why == "arithmetic on \"nice\"");
    o = check("word < \"z\"");
    CHECK_FALSE(o.pass);
    CHECK(o.why == "cannot order \"nice\" and \"z\"");
    o = check("nothing + 1 == 1");
    CHECK(o.why == "arithmetic on none");
}

TEST_CASE("the validator is asked about every metric at parse time", "[lesson]") {
    std::map<std::string, int> seen;
    const MetricValidator v = [&](const std::string& name, int n) {
        seen[name] = n;
        return name == "bad" ? std::string("no such thing") : std::string();
    };
    Expectation::parse("f(x, y) + g() == h(1, 2, 3)", v);
    CHECK(seen == std::map<std::string, int>{{"f", 2}, {"x", 0}, {"y", 0}, {"g", 0}, {"h", 3}});
    CHECK_THROWS_WITH(Expectation::parse("bad == 1", v), "no such thing");
}
