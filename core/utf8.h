#pragma once
// UTF-8 as it arrives from users (prompts, file names, pasted text): strict validation, and an
// escaped form that is safe to print on one line.
#include <cstddef>
#include <string>
#include <string_view>

namespace kvs {

// Length (1..4) of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
// not one: stray continuation bytes, overlong forms, surrogates, code points above U+10FFFF and
// sequences cut short by the end of `s` all give 0.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// `s` with control bytes (newline and tab included), DEL and bytes that are not well-formed
// UTF-8 written as \xNN; everything else, Chinese and emoji included, is kept. A message built
// from user text then stays one line and cannot drive the terminal (escape sequences).
// Idempotent: the escapes themselves are printable ASCII.
std::string escape_for_one_line(std::string_view s);

}  // namespace kvs
