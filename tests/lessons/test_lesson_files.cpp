// The shipped lessons: the same files in each language, every file parses and asks the learner,
// English and Chinese drive the engine with the same directives; and `kvscope-cli lesson` as a
// user runs it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;

namespace {

std::vector<std::string> directive_texts(const LessonStep& s) {
    std::vector<std::string> out;
    for (const auto& d : s.directives) out.push_back(d.text);
    return out;
}

void write_text(const std::filesystem::path& p, const std::string& text) {
    test::write_file(p, std::vector<unsigned char>(text.begin(), text.end()));
}

}  // namespace

TEST_CASE("the same lessons in English and in Chinese, numbered in order", "[lesson]") {
    REQUIRE_FALSE(lessons_dir().empty());
    const auto en = list_lessons("en");
    const auto zh = list_lessons("zh");
    REQUIRE(en.size() >= 10);
    REQUIRE(zh.size() == en.size());
    for (std::size_t i = 0; i < en.size(); ++i) {
        CHECK(en[i].number > (i == 0 ? 0 : en[i - 1].number));
        CHECK(zh[i].name == en[i].name);  // the same file names in both folders
    }
    CHECK(en.front().number == 1);
    CHECK(en.back().name == "13-prefix-window-quantised");
    // No gap in the numbering: lesson N is the N-th file.
    for (std::size_t i = 0; i < en.size(); ++i) CHECK(en[i].number == static_cast<int>(i) + 1);
    CHECK_THROWS_AS(list_lessons("fr"), Error);
}

TEST_CASE("every lesson asks the learner at least once, in both languages", "[lesson]") {
    for (const std::string lang : {"en", "zh"}) {
        int asks = 0;
        for (const auto& f : list_lessons(lang)) {
            const Lesson l = load_lesson(f.path);
            int here = 0;
            for (const auto& s : l.steps) here += s.ask() != nullptr;
            INFO(f.path);
            CHECK(here >= 1);
            asks += here;
        }
        CHECK(asks >= 9);
    }
}

TEST_CASE("English and Chinese lessons use the same directives, step by step", "[lesson]") {
    const auto en = list_lessons("en");
    const auto zh = list_lessons("zh");
    for (std::size_t i = 0; i < en.size() && i < zh.size(); ++i) {
        INFO(en[i].path << " against " << zh[i].path);
        const Lesson a = load_lesson(en[i].path);
        const Lesson b = load_lesson(zh[i].path);
        CHECK(a.title != b.title);  // translated, not copied
        REQUIRE(a.steps.size() == b.steps.size());
        for (std::size_t k = 0; k < a.steps.size(); ++k) {
            INFO("step " << k + 1 << ": " << a.steps[k].title);
            CHECK(directive_texts(a.steps[k]) == directive_texts(b.steps[k]));
            CHECK_FALSE(a.steps[k].prose.empty());
            CHECK_FALSE(b.steps[k].prose.empty());
        }
    }
}

TEST_CASE("lessons are found by number, name or path", "[lesson]") {
    const std::string p = find_lesson("3", "zh");
    CHECK(p.find("/zh/03-") != std::string::npos);
    CHECK(find_lesson("03", "en") == find_lesson(list_lessons("en")[2].name, "en"));
    CHECK(find_lesson(p, "en") == p);  // a path wins over the language
    CHECK_THROWS_WITH(find_lesson("42", "en"), "no lesson '42' in en (kvscope-cli lesson --list)");
    CHECK_THROWS_WITH(find_lesson("/no/such.md", "en"), "/no/such.md: no such lesson file");
}

TEST_CASE("KVSCOPE_LESSONS points at another lessons folder", "[lesson]") {
    const auto dir = test::temp_dir("lesson-env");
    std::filesystem::create_directories(dir / "en");
    write_text(dir / "en" / "01-only.md", "# Only\n## S\n@model toy\n");
    ::setenv("KVSCOPE_LESSONS", dir.string().c_str(), 1);
    const std::string found = lessons_dir();
    const auto en = list_lessons("en");
    ::unsetenv("KVSCOPE_LESSONS");
    CHECK(found == dir.lexically_normal().string());
    REQUIRE(en.size() == 1);
    CHECK(en[0].name == "01-only");
    CHECK(lessons_dir() != found);  // back to the source tree
}

TEST_CASE("kvscope-cli lesson --list names every lesson in both languages", "[lesson][cli]") {
    const auto r = run_cli({"lesson", "--list"});
    CHECK(r.exit_code == 0);
    for (const char* lang : {"en", "zh"})
        for (const auto& f : list_lessons(lang)) {
            INFO(f.path);
            CHECK(r.out.find(load_lesson(f.path).title) != std::string::npos);
        }
    CHECK(run_cli({"lesson", "--help"}).exit_code == 0);
}

TEST_CASE("kvscope-cli lesson: exit 0 when every check holds, 1 when one fails, 2 for a bad file",
          "[lesson][cli]") {
    const auto dir = test::temp_dir("lesson-cli");
    write_text(dir / "good.md",
               "# Good\n## Prefill\n@model toy\n@prompt Today weather is so\n"
               "@prefill\n@expect token == \"nice\"\n@expect rows == 4\n");
    auto r = run_cli({"lesson", (dir / "good.md").string(), "--backend", "cpu"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("PASS  @expect token == \"nice\"") != std::string::npos);
    CHECK(r.out.find("result: 2 checks, 2 passed, 0 failed; ran to the end") != std::string::npos);

    write_text(dir / "wrong.md",
               "# Wrong\n## Prefill\n@model toy\n@prompt Today weather is so\n"
               "@prefill\n@expect token == \"delicious\"\n## Next\n@decode 1\n");
    r = run_cli({"lesson", (dir / "wrong.md").string(), "--backend", "cpu"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("FAIL  @expect token == \"delicious\"") != std::string::npos);
    CHECK(r.out.find("got \"nice\" against \"delicious\"") != std::string::npos);
    CHECK(r.out.find("[2/2] Next") != std::string::npos);  // a failed check does not stop it

    write_text(dir / "broken.md", "# Broken\n## Prefill\n@model toy\n@decode 1\n");
    r = run_cli({"lesson", (dir / "broken.md").string(), "--backend", "cpu"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("broken.md:4: @decode 1: @decode needs @prefill first") != std::string::npos);
    CHECK(r.out.find("stopped by an error") != std::string::npos);

    write_text(dir / "typo.md", "# Typo\n## Prefill\n@model toy\n@prefil\n");
    r = run_cli({"lesson", (dir / "typo.md").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "kvscope-cli: error: " + (dir / "typo.md").string() +
                       ":4: unknown directive '@prefil' (did you mean @prefill?)\n");

    r = run_cli({"lesson"});
    CHECK(r.exit_code == 2);
    r = run_cli({"lesson", "1", "--lang", "fr"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--lang: 'fr' is not one of en, zh") != std::string::npos);
}

TEST_CASE("the seed tutorials' points table names lesson steps that exist", "[lesson]") {
    const std::string readme = test::slurp(std::filesystem::path(lessons_dir()) / "README.md");
    const auto at = readme.find("## Where the seed tutorials' points are taught");
    REQUIRE(at != std::string::npos);
    const std::string table = readme.substr(at);
    const auto en = list_lessons("en");
    int refs = 0;
    std::size_t line_start = 0;
    while (line_start < table.size()) {
        const auto nl = table.find('\n', line_start);
        const std::string line = table.substr(line_start, nl - line_start);
        line_start = nl == std::string::npos ? table.size() : nl + 1;
        if (line.rfind("| ", 0) != 0 || line.find("---") != std::string::npos) continue;
        // The last column: lesson/step references, "2/4, 9/2".
        const std::string cell = line.substr(line.rfind('|', line.size() - 2) + 1);
        const std::regex ref("(\\d+)/(\\d+)");
        for (auto it = std::sregex_iterator(cell.begin(), cell.end(), ref);
             it != std::sregex_iterator(); ++it) {
            const int lesson = std::stoi((*it)[1].str());
            const int step = std::stoi((*it)[2].str());
            INFO(line);
            const LessonFile* f = nullptr;
            for (const auto& e : en)
                if (e.number == lesson) f = &e;
            REQUIRE(f);
            CHECK(step >= 1);
            CHECK(step <= static_cast<int>(load_lesson(f->path).steps.size()));
            ++refs;
        }
    }
    CHECK(refs > 30);
    // Every point is taught somewhere: no row waits for a lesson still to be written.
    CHECK(table.find("to be written") == std::string::npos);
    // Lesson 10 teaches the causal mask's points.
    CHECK(table.find("| 10/1, 10/2 |") != std::string::npos);
}
