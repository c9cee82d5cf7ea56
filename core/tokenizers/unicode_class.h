#pragma once
// The three Unicode classes GPT-2's pre-tokenizer regex names, by code point: \p{L} (general
// categories Lu Ll Lt Lm Lo), \p{N} (Nd Nl No) and \s (the White_Space property: tab..CR, space,
// U+0085, NBSP, U+1680, U+2000..U+200A, U+2028/9, U+202F, U+205F, U+3000). The tables are
// generated at configure time from Debian's unicode-data package (cmake/unicode_tables.cmake,
// Unicode 15.0 on Debian 12); none is committed. JavaScript's \s differs from White_Space in two
// code points (it has U+FEFF and lacks U+0085): the GPT-2 peer test's corpus avoids both.
#include <cstddef>
#include <string_view>

namespace kvs {

bool is_unicode_letter(char32_t c);  // \p{L}
bool is_unicode_number(char32_t c);  // \p{N}
bool is_unicode_space(char32_t c);   // \s (White_Space)

// The code point starting at s[i] and its length in bytes. Bytes that are not well-formed UTF-8
// (core/util/utf8.h's strict rule) come back one at a time as U+FFFD-like "other" code points (none
// of the classes above), so malformed text still splits, byte for byte, and nothing is lost.
struct CodePoint {
    char32_t c = 0;
    std::size_t bytes = 1;
};
CodePoint next_code_point(std::string_view s, std::size_t i);

}  // namespace kvs
