// One numbering everywhere: positions count from 1, layers, heads and steps
// from 0. The toy's head "even" and the position of "so" in "Today weather is so" must read the
// same in `kvscope-cli toy`, its trace JSON and lesson 1's text in both languages.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <string>

#include "lessonlib/lesson_files.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// The first capture of `re` in `text`, as a number; -1 when it does not match.
int first_number(const std::string& text, const std::string& re) {
    std::smatch m;
    if (!std::regex_search(text, m, std::regex(re))) return -1;
    return std::stoi(m[1].str());
}

// Index of `piece` in a JSON array of strings given as its inner text ("a","b",...).
int index_in(const std::string& array, const std::string& piece) {
    const std::regex item("\"((?:[^\"\\\\]|\\\\.)*)\"");
    int i = 0;
    for (auto it = std::sregex_iterator(array.begin(), array.end(), item);
         it != std::sregex_iterator(); ++it, ++i)
        if ((*it)[1].str() == piece) return i;
    return -1;
}

std::string json_array(const std::string& json, const std::string& key) {
    std::smatch m;
    if (!std::regex_search(json, m, std::regex("\"" + key + "\"\\s*:\\s*\\[([^\\]]*)\\]")))
        return "";
    return m[1].str();
}

}  // namespace

TEST_CASE("the CLI, the trace JSON and lesson 1 number head 'even' and 'so' alike",
          "[lesson][indexing]") {
    const auto dir = test::temp_dir("indexing");
    const std::string json_path = (dir / "toy.json").string();
    const auto r = test::run_cli({"toy", "--trace-json", json_path});
    REQUIRE(r.exit_code == 0);

    // The CLI: `head N "even": ...` and the prefill table's row `  POS so ...`.
    const int cli_head = first_number(r.out, "head (\\d+) \"even\"");
    const int cli_pos = first_number(r.out, "\\n\\s+(\\d+) so\\s");

    // The trace JSON: head_names by head index (heads_from 0), token_pieces by array index, and
    // positions_from saying what the first array slot's position is.
    const std::string json = test::slurp(json_path);
    const int json_head = index_in(json_array(json, "head_names"), "even") +
                          first_number(json, "\"heads_from\"\\s*:\\s*(\\d+)");
    const int json_pos = index_in(json_array(json, "token_pieces"), "so") +
                         first_number(json, "\"positions_from\"\\s*:\\s*(\\d+)");

    // Lesson 1: "head 0, **even**" and the table row "| 4 | so |", in each language.
    const std::string en = test::slurp(find_lesson("1", "en"));
    const std::string zh = test::slurp(find_lesson("1", "zh"));
    const int en_head = first_number(en, "head (\\d+), \\*\\*even\\*\\*");
    const int zh_head = first_number(zh, "\xE5\xA4\xB4 (\\d+)\xEF\xBC\x8C\\*\\*even");  // 头 N，
    const int en_pos = first_number(en, "\\|\\s*(\\d+)\\s*\\|\\s*so\\s*\\|");
    const int zh_pos = first_number(zh, "\\|\\s*(\\d+)\\s*\\|\\s*so\\s*\\|");

    INFO(r.out);
    CHECK(cli_head == 0);
    CHECK(json_head == cli_head);
    CHECK(en_head == cli_head);
    CHECK(zh_head == cli_head);
    CHECK(cli_pos == 4);
    CHECK(json_pos == cli_pos);
    CHECK(en_pos == cli_pos);
    CHECK(zh_pos == cli_pos);
}
