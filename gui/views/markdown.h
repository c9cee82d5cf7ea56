#pragma once
// The Markdown the lessons are written in, parsed into blocks for the lesson panel: headings,
// paragraphs (lines joined), bullet and numbered lists (indented continuation lines joined),
// pipe tables, fenced code and rules; inside them **bold**, *italic* and `code` spans. Anything
// else is kept as plain text, so no input is lost or rejected.
#include <string>
#include <string_view>
#include <vector>

namespace kvs::gui {

struct MdSpan {
    std::string text;
    bool bold = false;
    bool italic = false;
    bool code = false;

    bool operator==(const MdSpan&) const = default;
};
using MdLine = std::vector<MdSpan>;

enum class MdKind { Heading, Paragraph, Bullet, Numbered, Table, Code, Rule };

struct MdBlock {
    MdKind kind = MdKind::Paragraph;
    int level = 0;   // heading: 1..6; lists: nesting depth from the indentation (0 = outermost)
    int number = 0;  // numbered list item
    MdLine spans;    // heading, paragraph, list item
    std::vector<std::vector<MdLine>> rows;  // table: the header row first, then the body rows
    std::string code;                       // fenced code, lines joined with '\n'
};

// Inline spans of one line of text: `code` first (nothing inside it is markup), then **bold**
// and *italic*; an unmatched marker is literal text.
MdLine parse_inline(std::string_view text);
std::vector<MdBlock> parse_markdown(std::string_view text);
// The text of spans without markup, e.g. for measuring or searching.
std::string plain_text(const MdLine& line);

}  // namespace kvs::gui
