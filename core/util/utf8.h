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
// UTF-8 written as \xNN, and code points that reorder or hide text (bidirectional controls such
// as U+202E, zero-width characters, line and paragraph separators, other format characters) as
// \uXXXX; everything else, Chinese and emoji included, is kept. A message built from user text
// then stays one line, reads in the order it was written, and cannot drive the terminal (escape
// sequences). Idempotent: the escapes themselves are printable ASCII.
std::string escape_for_one_line(std::string_view s);

// escape_for_one_line, at most about kMaxMessageBytes long: a longer text keeps its start (where
// a message names the file, line and what is wrong) and its end (the hint after the value),
// the middle replaced by " ... [N bytes left out] ... ", cut between characters. Every message
// goes through it (kvs::Error): a value quoted from a 100 KB line of a file must not become a
// 100 KB message on the terminal or in the window.
constexpr std::size_t kMaxMessageBytes = 2048;
std::string message_for_one_line(std::string_view s);

// The same for text printed on a terminal that may span lines (generated text, lesson prose):
// newline and tab are kept, every other control (ESC sequences: clear screen, set title), the
// C1 controls and broken UTF-8 are shown as \xNN, bidi controls and invisible characters as \uXXXX.
// Everything the CLIs print from a file, a tokenizer or a user goes through this or
// escape_for_one_line.
std::string escape_for_terminal(std::string_view s);

// escape_for_terminal over a stream of pieces (tokens): a UTF-8 character split across two
// tokens is held back until its last byte arrives instead of being escaped byte by byte.
class TerminalText {
  public:
    std::string feed(std::string_view piece);
    std::string finish();  // what is still held back, escaped

  private:
    std::string pending_;
};

}  // namespace kvs
