#include "core/util/utf8.h"

#include <cstdio>

namespace kvs {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = at(0);
    if (c < 0x80) return 1;
    // The second byte's range depends on the lead byte (RFC 3629, table 3-7 of Unicode): that is
    // what rules out overlong forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and
    // code points past U+10FFFF (F4 90..BF, F5..FF).
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (s.size() - i < n) return 0;
    if (at(1) < lo || at(1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((at(k) & 0xC0) != 0x80) return 0;
    return n;
}

namespace {

// The code point of the well-formed sequence of n bytes at s[i].
char32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
    const auto b = [&](std::size_t k) { return char32_t(static_cast<unsigned char>(s[i + k])); };
    if (n == 1) return b(0);
    char32_t c = b(0) & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (std::size_t k = 1; k < n; ++k) c = (c << 6) | (b(k) & 0x3F);
    return c;
}

// Code points that reorder the text around them or are not seen at all: the bidirectional
// controls (an RLO, U+202E, turns "exe.txt" around), zero-width characters and joiners, the
// other format characters (Unicode's Cf), line and paragraph separators (they end a line where
// the terminal does not see one), invisible fillers and the tag characters. Variation selectors
// stay: they only pick an emoji's look.
bool hides_or_reorders(char32_t c) {
    return c == 0x00AD || (c >= 0x0600 && c <= 0x0605) || c == 0x061C || c == 0x06DD ||
           c == 0x070F || c == 0x08E2 || c == 0x034F || c == 0x115F || c == 0x1160 || c == 0x180E ||
           (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
           (c >= 0x2060 && c <= 0x206F) || c == 0x3164 || c == 0xFEFF || c == 0xFFA0 ||
           (c >= 0xFFF9 && c <= 0xFFFB) || c == 0x110BD || c == 0x110CD ||
           (c >= 0x13430 && c <= 0x1343F) || (c >= 0x1BCA0 && c <= 0x1BCA3) ||
           (c >= 0x1D173 && c <= 0x1D17A) || (c >= 0xE0000 && c <= 0xE007F);
}

// The one escaper of untrusted text. Control bytes (ESC, CR, BEL, ...), DEL, the C1 controls
// U+0080..U+009F (U+009B is CSI to some terminals) and bytes that are not well-formed UTF-8
// become \xNN; code points that reorder or hide text (hides_or_reorders) become \uXXXX (or
// \UXXXXXXXX); newline and tab stay when `keep_lines`. With `tail`, an incomplete sequence at the
// very end is handed back there (the next piece may complete it) instead of escaped.
void escape_into(std::string& out, std::string_view s, bool keep_lines, std::string* tail) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0 && tail && c >= 0xC2 && c <= 0xF4) {
            const std::size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            bool prefix = s.size() - i < need;
            for (std::size_t k = i + 1; prefix && k < s.size(); ++k)
                prefix = (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
            if (prefix) {
                tail->assign(s.substr(i));
                return;
            }
        }
        const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
        const bool kept_control = keep_lines && (c == '\n' || c == '\t');
        if (n == 0 || c1 || ((c < 0x20 || c == 0x7F) && !kept_control)) {
            const std::size_t bytes = c1 ? 2 : 1;
            for (std::size_t k = 0; k < bytes; ++k) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x",
                              static_cast<unsigned>(static_cast<unsigned char>(s[i + k])));
                out += buf;
            }
            i += bytes;
        } else if (const char32_t cp = n >= 2 ? code_point(s, i, n) : 0; hides_or_reorders(cp)) {
            char buf[16];
            std::snprintf(buf, sizeof buf, cp > 0xFFFF ? "\\U%08x" : "\\u%04x",
                          static_cast<unsigned>(cp));
            out += buf;
            i += n;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
}

}  // namespace

std::string escape_for_one_line(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    escape_into(out, s, false, nullptr);
    return out;
}

std::string escape_for_terminal(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    escape_into(out, s, true, nullptr);
    return out;
}

std::string TerminalText::feed(std::string_view piece) {
    std::string in = std::move(pending_);
    pending_.clear();
    in.append(piece);
    std::string out;
    escape_into(out, in, true, &pending_);
    return out;
}

std::string TerminalText::finish() {
    std::string out;
    escape_into(out, pending_, true, nullptr);
    pending_.clear();
    return out;
}

std::string message_for_one_line(std::string_view s) {
    std::string e = escape_for_one_line(s);
    if (e.size() <= kMaxMessageBytes) return e;
    // Back to the start of a character (over UTF-8 continuation bytes).
    const auto boundary = [&](std::size_t i) {
        while (i > 0 && (static_cast<unsigned char>(e[i]) & 0xC0) == 0x80) --i;
        return i;
    };
    const std::size_t head = boundary(kMaxMessageBytes * 3 / 4);
    const std::size_t tail = boundary(e.size() - kMaxMessageBytes / 4);
    return e.substr(0, head) + " ... [" + std::to_string(tail - head) + " bytes left out] ... " +
           e.substr(tail);
}

}  // namespace kvs
