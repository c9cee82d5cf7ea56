// The window's words and text, without a display: the English/Chinese string table (every
// string used in gui/ has a row, both languages, the same printf conversions), the Markdown the
// lessons are drawn from, the lesson catalogue, and the helpers that keep user text whole.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/model/counts.h"
#include "core/util/format.h"
#include "core/util/utf8.h"
#include "gui/state/lesson_catalog.h"
#include "gui/state/strings.h"
#include "gui/views/markdown.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;
namespace fs = std::filesystem;

namespace {

using kvs::test::slurp;

bool valid_utf8(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// The C escapes the string table's literals use, undone: \" and \\.
std::string unescape(const std::string& lit) {
    std::string out;
    for (std::size_t i = 0; i < lit.size(); ++i) {
        if (lit[i] == '\\' && i + 1 < lit.size()) ++i;
        out += lit[i];
    }
    return out;
}

// Every tr("...") and tr_later("...") in gui/'s .cpp files (every room) and web/*.cpp (the page's
// own words), adjacent literals joined.
std::set<std::string> translated_in_sources() {
    std::set<std::string> keys;
    const std::regex call(R"re(\btr(?:_later)?\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)[,)])re");
    const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
    std::vector<fs::directory_entry> files;
    for (const char* dir : {"gui", "web"})
        for (const auto& e : fs::recursive_directory_iterator(fs::path(KVSCOPE_SOURCE_DIR) / dir))
            files.push_back(e);
    for (const auto& e : files) {
        if (e.path().extension() != ".cpp") continue;
        const std::string src = slurp(e.path());
        for (std::sregex_iterator m(src.begin(), src.end(), call), end; m != end; ++m) {
            const std::string lits = (*m)[1];
            std::string key;
            for (std::sregex_iterator l(lits.begin(), lits.end(), literal); l != end; ++l)
                key += (*l)[1];
            keys.insert(unescape(key));
        }
    }
    return keys;
}

}  // namespace

TEST_CASE("every UI string has English and Chinese with the same printf conversions",
          "[gui][strings]") {
    std::set<std::string> seen;
    for (const UiString& s : ui_strings()) {
        INFO(s.en);
        REQUIRE(s.en != nullptr);
        REQUIRE(s.zh != nullptr);
        CHECK(std::string(s.en).size() > 0);
        CHECK(std::string(s.zh).size() > 0);
        CHECK(seen.insert(s.en).second);  // no key twice
        CHECK(valid_utf8(s.zh));
        // A different conversion list would make snprintf read the wrong arguments.
        CHECK(printf_conversions(s.en) == printf_conversions(s.zh));
    }
    CHECK(printf_conversions("%d of %s, %.2f%%, %llu") == "dsfllu");
    CHECK(printf_conversions("step %%d of %d") == "d");
}

TEST_CASE("every string the window translates is in the table", "[gui][strings]") {
    auto used = translated_in_sources();
    REQUIRE(used.size() > 100);  // the scan found the window's strings
    // The op strip puts core's op names through tr(): each needs its Chinese row.
    for (int k = 0; k < static_cast<int>(kvs::OpKind::kCount); ++k)
        used.insert(kvs::op_kind_name(static_cast<kvs::OpKind>(k)));
    std::set<std::string> table;
    for (const UiString& s : ui_strings()) table.insert(s.en);
    for (const auto& k : used) {
        INFO(k);
        CHECK(table.count(k) == 1);
    }
    // And the table holds nothing the window does not say.
    for (const auto& k : table) {
        INFO(k);
        CHECK(used.count(k) == 1);
    }
}

TEST_CASE("the language switch changes what tr() answers", "[gui][strings]") {
    set_language(Lang::En);
    CHECK(std::string(tr("Reset")) == "Reset");
    CHECK(std::string(tr("Attention")) == "Attention");
    set_language(Lang::Zh);
    CHECK(std::string(tr("Reset")) == "\xE9\x87\x8D\xE7\xBD\xAE");                  // 重置
    CHECK(std::string(tr("Attention")) == "\xE6\xB3\xA8\xE6\x84\x8F\xE5\x8A\x9B");  // 注意力
    CHECK(std::string(tr("no such string")) == "no such string");  // English, never empty
    set_language(Lang::En);
    CHECK(std::string(tr("Reset", Lang::Zh)) == "\xE9\x87\x8D\xE7\xBD\xAE");
    CHECK(lang_from_code("zh") == Lang::Zh);
    CHECK(lang_from_code("fr") == Lang::En);
    CHECK(std::string(lang_code(Lang::Zh)) == "zh");
}

TEST_CASE("Markdown: headings, paragraphs, lists, tables and inline spans", "[gui][markdown]") {
    const auto b = parse_markdown(
        "# Title\n"
        "\n"
        "First line\n"
        "second line with **bold**, *italic* and `code * not`.\n"
        "\n"
        "- one item\n"
        "  continued\n"
        "- two\n"
        "1. first\n"
        "\n"
        "| a | b |\n"
        "| --- | --- |\n"
        "| `x|y` | 2 |\n"
        "\n"
        "```\n"
        "@not a directive\n"
        "```\n"
        "---\n");
    REQUIRE(b.size() == 8);
    CHECK(b[0].kind == MdKind::Heading);
    CHECK(b[0].level == 1);
    CHECK(plain_text(b[0].spans) == "Title");
    CHECK(b[1].kind == MdKind::Paragraph);
    CHECK(plain_text(b[1].spans) == "First line second line with bold, italic and code * not.");
    const MdLine& p = b[1].spans;
    REQUIRE(p.size() == 7);
    CHECK(p[1] == MdSpan{"bold", true, false, false});
    CHECK(p[3] == MdSpan{"italic", false, true, false});
    CHECK(p[5] == MdSpan{"code * not", false, false, true});
    CHECK(b[2].kind == MdKind::Bullet);
    CHECK(plain_text(b[2].spans) == "one item continued");
    CHECK(b[3].kind == MdKind::Bullet);
    CHECK(b[4].kind == MdKind::Numbered);
    CHECK(b[4].number == 1);
    REQUIRE(b[5].kind == MdKind::Table);
    REQUIRE(b[5].rows.size() == 2);  // the separator row is not a row
    CHECK(plain_text(b[5].rows[0][1]) == "b");
    CHECK(plain_text(b[5].rows[1][0]) == "x|y");  // a pipe inside code is not a cell break
    CHECK(b[6].kind == MdKind::Code);
    CHECK(b[6].code == "@not a directive");
    CHECK(b[7].kind == MdKind::Rule);
}

TEST_CASE("Markdown: unmatched markers are text, escapes are kept, Chinese lines join",
          "[gui][markdown]") {
    CHECK(plain_text(parse_inline("2 * 3 = 6 and a * b")) == "2 * 3 = 6 and a * b");
    CHECK(plain_text(parse_inline("**open only")) == "**open only");
    CHECK(plain_text(parse_inline("\\*not italic\\*")) == "*not italic*");
    CHECK(plain_text(parse_inline("a `b")) == "a `b");
    const auto nested = parse_inline("**bold *and italic***");
    REQUIRE(nested.size() == 2);
    CHECK(nested[1] == MdSpan{"and italic", true, true, false});
    // Chinese has no spaces between words: lines join without one; English lines with one.
    const auto zh = parse_markdown("\xE4\xB8\x80\xE4\xBA\x8C\n\xE4\xB8\x89\n");  // 一二 / 三
    REQUIRE(zh.size() == 1);
    CHECK(plain_text(zh[0].spans) == "\xE4\xB8\x80\xE4\xBA\x8C\xE4\xB8\x89");
    CHECK(plain_text(parse_markdown("a\nb")[0].spans) == "a b");
}

TEST_CASE("every lesson's prose parses without losing a word", "[gui][markdown][lessons]") {
    LessonCatalog cat;
    cat.load();
    REQUIRE(cat.entries().size() >= 9);
    int steps = 0;
    for (const auto& e : cat.entries())
        for (Lang lang : {Lang::En, Lang::Zh}) {
            const auto lesson = cat.lesson(e.number, lang);
            REQUIRE(lesson);
            for (const auto& s : lesson->steps) {
                ++steps;
                std::string all;
                for (const auto& b : parse_markdown(s.prose)) {
                    all += plain_text(b.spans) + " " + b.code + " ";
                    for (const auto& r : b.rows)
                        for (const auto& c : r) all += plain_text(c) + " ";
                }
                // Every word of the source, markup stripped, is in the parsed text.
                std::istringstream words(s.prose);
                std::string w;
                while (words >> w) {
                    std::string bare;
                    for (char c : w)
                        if (c != '*' && c != '`' && c != '|' && c != '\\') bare += c;
                    // Markers that are not text: rules and table separators, heading hashes,
                    // list numbers.
                    if (bare.find_first_not_of("-:#") == std::string::npos ||
                        std::regex_match(bare, std::regex(R"(\d+[.)])")))
                        continue;
                    INFO(e.number << " " << lang_code(lang) << ": " << bare);
                    CHECK(all.find(bare) != std::string::npos);
                }
            }
        }
    CHECK(steps > 60);
}

TEST_CASE("the lesson catalogue lists every lesson with its title in both languages",
          "[gui][lessons]") {
    LessonCatalog cat;
    cat.load();
    CHECK(cat.error().empty());
    REQUIRE(cat.entries().size() >= 9);
    for (const auto& e : cat.entries()) {
        INFO(e.number);
        CHECK_FALSE(e.path[0].empty());
        CHECK_FALSE(e.path[1].empty());
        CHECK(e.title[0] == load_lesson(e.path[0]).title);
        CHECK(e.title[1] == load_lesson(e.path[1]).title);
        CHECK(e.title[0] != e.title[1]);
        // The two languages share their directives, so either can be played.
        const auto en = cat.lesson(e.number, Lang::En);
        const auto zh = cat.lesson(e.number, Lang::Zh);
        REQUIRE(en);
        REQUIRE(zh);
        CHECK(en->steps.size() == zh->steps.size());
    }
    CHECK(cat.find(1) != nullptr);
    CHECK(cat.find(77) == nullptr);
    std::string why;
    CHECK(cat.lesson(77, Lang::En, &why) == nullptr);
    CHECK(why.find("77") != std::string::npos);
}

TEST_CASE("token labels keep whole characters and show every other byte as <0xNN>", "[gui][text]") {
    CHECK(visible_piece(" a") ==
          "\xC2\xB7"
          "a");
    CHECK(visible_piece("\n") == "<0x0A>");
    CHECK(visible_piece("\x7F") == "<0x7F>");
    CHECK(visible_piece("\xE4\xBD\xA0") == "\xE4\xBD\xA0");          // 你, whole
    CHECK(visible_piece("\xE4\xBD") == "<0xE4><0xBD>");              // half of it
    CHECK(visible_piece("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");  // an emoji, whole
    CHECK(visible_piece("\xFF"
                        "a") == "<0xFF>a");
}
