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

// The one escaper of untrusted text. Control bytes (ESC, CR, BEL, ...), DEL, the C1 controls
// U+0080..U+009F (U+009B is CSI to some terminals) and bytes that are not well-formed UTF-8
// become \xNN; newline and tab stay when `keep_lines`. With `tail`, an incomplete sequence at the
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

}  // namespace kvs
