#include "gui/views/markdown.h"

#include <cctype>

namespace kvs::gui {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

int indent_of(std::string_view s) {
    int n = 0;
    for (char c : s) {
        if (c == ' ')
            ++n;
        else if (c == '\t')
            n += 4;
        else
            break;
    }
    return n;
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

// The code point whose UTF-8 encoding starts at s[i] (0 when it is not a lead byte).
char32_t code_point_at(std::string_view s, std::size_t i) {
    if (i >= s.size()) return 0;
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return c;
    const int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
    if (n < 0 || i + n >= s.size()) return 0;
    char32_t cp = c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) cp = (cp << 6) | (b(i + k) & 0x3F);
    return cp;
}

// Chinese, Japanese and Korean text has no spaces between words: lines of it are joined
// without one.
bool is_cjk(char32_t cp) {
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFF00 && cp <= 0xFFEF);
}

char32_t last_code_point(std::string_view s) {
    if (s.empty()) return 0;
    std::size_t i = s.size() - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    return code_point_at(s, i);
}

void join_line(std::string& text, std::string_view line) {
    if (text.empty()) {
        text = line;
        return;
    }
    if (!(is_cjk(last_code_point(text)) && is_cjk(code_point_at(line, 0)))) text += ' ';
    text += line;
}

bool is_fence(std::string_view t) {
    return t.starts_with("```") || t.starts_with("~~~");
}

bool is_rule(std::string_view t) {
    if (t.size() < 3) return false;
    const char c = t[0];
    if (c != '-' && c != '*' && c != '_') return false;
    int n = 0;
    for (char x : t) {
        if (x == c)
            ++n;
        else if (!is_space(x))
            return false;
    }
    return n >= 3;
}

int heading_level(std::string_view t) {
    int n = 0;
    while (n < static_cast<int>(t.size()) && t[n] == '#') ++n;
    if (n == 0 || n > 6 || n >= static_cast<int>(t.size()) || !is_space(t[n])) return 0;
    return n;
}

// "- item", "* item", "+ item": the text after the marker, or npos.
std::size_t bullet_text(std::string_view t) {
    if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && is_space(t[1])) return 2;
    return std::string_view::npos;
}

// "12. item" / "12) item": the text after the marker, or npos; `number` receives 12.
std::size_t numbered_text(std::string_view t, int& number) {
    std::size_t i = 0;
    while (i < t.size() && i < 9 && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i == 0 || i + 1 >= t.size() || (t[i] != '.' && t[i] != ')') || !is_space(t[i + 1]))
        return std::string_view::npos;
    number = std::stoi(std::string(t.substr(0, i)));
    return i + 2;
}

bool starts_block(std::string_view t) {
    int n = 0;
    return t.empty() || is_fence(t) || heading_level(t) > 0 || t.front() == '|' || is_rule(t) ||
           bullet_text(t) != std::string_view::npos ||
           numbered_text(t, n) != std::string_view::npos;
}

// Cells of a table row "| a | b |": split at '|' outside `code` and not escaped.
std::vector<std::string> split_row(std::string_view t) {
    std::vector<std::string> cells;
    std::string cur;
    bool in_code = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '\\' && i + 1 < t.size() && t[i + 1] == '|') {
            cur += '|';
            ++i;
        } else if (c == '`') {
            in_code = !in_code;
            cur += c;
        } else if (c == '|' && !in_code) {
            cells.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    cells.push_back(cur);
    // The leading and trailing pipes leave empty cells at the ends.
    if (!cells.empty() && trim(cells.front()).empty()) cells.erase(cells.begin());
    if (!cells.empty() && trim(cells.back()).empty()) cells.pop_back();
    for (auto& c : cells) c = std::string(trim(c));
    return cells;
}

bool is_separator_row(const std::vector<std::string>& cells) {
    if (cells.empty()) return false;
    for (const auto& c : cells) {
        if (c.empty()) return false;
        for (char x : c)
            if (x != '-' && x != ':' && !is_space(x)) return false;
    }
    return true;
}

void push_text(MdLine& out, std::string text, bool bold, bool italic) {
    if (text.empty()) return;
    if (!out.empty() && !out.back().code && out.back().bold == bold &&
        out.back().italic == italic) {
        out.back().text += text;
        return;
    }
    out.push_back({std::move(text), bold, italic, false});
}

bool escapable(char c) {
    return c == '*' || c == '`' || c == '\\' || c == '_' || c == '@' || c == '|' || c == '#';
}

// Emphasis markers: an opening one is followed by a non-space, a closing one preceded by one.
std::size_t find_closing(std::string_view s, std::size_t from, std::string_view marker) {
    for (std::size_t i = from; i + marker.size() <= s.size(); ++i) {
        if (s[i] == '\\') {
            ++i;
            continue;
        }
        if (s[i] == '`') {  // code spans are opaque
            const std::size_t e = s.find('`', i + 1);
            if (e == std::string_view::npos) return std::string_view::npos;
            i = e;
            continue;
        }
        if (s.substr(i, marker.size()) != marker || i == from || is_space(s[i - 1])) continue;
        // A single '*' is not the first half of "**"; in "***" the bold closes with the last two.
        if (marker.size() == 1 && i + 1 < s.size() && s[i + 1] == '*') {
            ++i;
            continue;
        }
        if (marker.size() == 2 && i + 2 < s.size() && s[i + 2] == '*') continue;
        return i;
    }
    return std::string_view::npos;
}

void parse_spans(std::string_view s, bool bold, bool italic, MdLine& out) {
    std::string text;
    std::size_t i = 0;
    auto flush = [&] {
        push_text(out, std::move(text), bold, italic);
        text.clear();
    };
    while (i < s.size()) {
        const char c = s[i];
        if (c == '\\' && i + 1 < s.size() && escapable(s[i + 1])) {
            text += s[i + 1];
            i += 2;
            continue;
        }
        if (c == '`') {
            const std::size_t e = s.find('`', i + 1);
            if (e != std::string_view::npos && e > i + 1) {
                flush();
                out.push_back({std::string(s.substr(i + 1, e - i - 1)), bold, italic, true});
                i = e + 1;
                continue;
            }
        }
        if (c == '*') {
            const bool dbl = i + 1 < s.size() && s[i + 1] == '*';
            const std::string_view marker = dbl ? "**" : "*";
            const std::size_t open_end = i + marker.size();
            if (open_end < s.size() && !is_space(s[open_end])) {
                const std::size_t e = find_closing(s, open_end, marker);
                if (e != std::string_view::npos) {
                    flush();
                    parse_spans(s.substr(open_end, e - open_end), bold || dbl, italic || !dbl, out);
                    i = e + marker.size();
                    continue;
                }
            }
        }
        text += c;
        ++i;
    }
    flush();
}

}  // namespace

MdLine parse_inline(std::string_view text) {
    MdLine out;
    parse_spans(text, false, false, out);
    return out;
}

std::string plain_text(const MdLine& line) {
    std::string s;
    for (const auto& sp : line) s += sp.text;
    return s;
}

std::vector<MdBlock> parse_markdown(std::string_view text) {
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= text.size();) {
        std::size_t e = text.find('\n', start);
        if (e == std::string_view::npos) e = text.size();
        lines.push_back(text.substr(start, e - start));
        start = e + 1;
    }
    std::vector<MdBlock> blocks;
    std::size_t i = 0;
    while (i < lines.size()) {
        const std::string_view raw = lines[i];
        const std::string_view t = trim(raw);
        if (t.empty()) {
            ++i;
            continue;
        }
        MdBlock b;
        if (is_fence(t)) {
            const std::string_view fence = t.substr(0, 3);
            b.kind = MdKind::Code;
            for (++i; i < lines.size() && !trim(lines[i]).starts_with(fence); ++i) {
                if (!b.code.empty()) b.code += '\n';
                b.code += lines[i];
            }
            ++i;  // the closing fence (or the end)
        } else if (const int h = heading_level(t)) {
            b.kind = MdKind::Heading;
            b.level = h;
            b.spans = parse_inline(trim(t.substr(h)));
            ++i;
        } else if (t.front() == '|') {
            b.kind = MdKind::Table;
            for (; i < lines.size() && trim(lines[i]).starts_with('|'); ++i) {
                const auto cells = split_row(trim(lines[i]));
                if (b.rows.size() == 1 && is_separator_row(cells)) continue;
                std::vector<MdLine> row;
                for (const auto& c : cells) row.push_back(parse_inline(c));
                b.rows.push_back(std::move(row));
            }
        } else if (is_rule(t)) {
            b.kind = MdKind::Rule;
            ++i;
        } else {
            int number = 0;
            const std::size_t bt = bullet_text(t);
            const std::size_t nt =
                bt == std::string_view::npos ? numbered_text(t, number) : std::string_view::npos;
            std::string joined;
            if (bt != std::string_view::npos || nt != std::string_view::npos) {
                b.kind = bt != std::string_view::npos ? MdKind::Bullet : MdKind::Numbered;
                b.number = number;
                const int ind = indent_of(raw);
                b.level = ind / 2;
                joined = std::string(trim(t.substr(bt != std::string_view::npos ? bt : nt)));
                // Continuation lines are indented past the marker's column.
                for (++i; i < lines.size(); ++i) {
                    const std::string_view n = trim(lines[i]);
                    if (n.empty() || indent_of(lines[i]) <= ind || starts_block(n)) break;
                    join_line(joined, n);
                }
            } else {
                b.kind = MdKind::Paragraph;
                joined = std::string(t);
                for (++i; i < lines.size(); ++i) {
                    const std::string_view n = trim(lines[i]);
                    if (starts_block(n)) break;
                    join_line(joined, n);
                }
            }
            b.spans = parse_inline(joined);
        }
        blocks.push_back(std::move(b));
    }
    return blocks;
}

}  // namespace kvs::gui
