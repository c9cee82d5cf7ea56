#include "core/tokenizers/unicode_class.h"

#include <algorithm>
#include <iterator>

#include "core/util/utf8.h"

namespace kvs {
namespace {

struct CodeRange {
    char32_t first, last;
};

// kLetters, kNumbers, kSpaces: sorted, disjoint, merged ranges (generated, see the header).
#include "unicode_tables.inc"

template <std::size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
    // The first range that ends at or after c; c is in the class when that range starts <= c.
    const auto it = std::lower_bound(std::begin(table), std::end(table), c,
                                     [](const CodeRange& r, char32_t x) { return r.last < x; });
    return it != std::end(table) && it->first <= c;
}

}  // namespace

bool is_unicode_letter(char32_t c) {
    return in(kLetters, c);
}
bool is_unicode_number(char32_t c) {
    return in(kNumbers, c);
}
bool is_unicode_space(char32_t c) {
    return in(kSpaces, c);
}

CodePoint next_code_point(std::string_view s, std::size_t i) {
    const std::size_t n = utf8_sequence_length(s, i);
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    switch (n) {
        case 1:
            return {b(0), 1};
        case 2:
            return {char32_t(b(0) & 0x1F) << 6 | (b(1) & 0x3F), 2};
        case 3:
            return {char32_t(b(0) & 0x0F) << 12 | char32_t(b(1) & 0x3F) << 6 | (b(2) & 0x3F), 3};
        case 4:
            return {char32_t(b(0) & 0x07) << 18 | char32_t(b(1) & 0x3F) << 12 |
                        char32_t(b(2) & 0x3F) << 6 | (b(3) & 0x3F),
                    4};
        default:
            return {0xFFFD, 1};  // one malformed byte: a symbol, like U+FFFD
    }
}

}  // namespace kvs
