#pragma once
// Numbers as the panels print them: short, with units.
#include <cstddef>
#include <string>

namespace kvs::gui {

std::string fmt_seconds(double s);  // "830 µs", "12.4 ms", "1.25 s"
std::string fmt_bytes(double b);    // "512 B", "4.0 KiB", "1.2 MiB"
std::string fmt_flops(double f);    // "950 FLOP", "1.2 MFLOP", "3.4 GFLOP"
// A token piece for a chip or a label: spaces shown as '·', control bytes and bytes that are
// not well-formed UTF-8 as <0x..>; every character that is kept is a whole UTF-8 sequence.
std::string visible_piece(const std::string& piece);
// Copies `s` into a text field's buffer of `size` bytes, NUL-terminated; a text too long is cut
// at a UTF-8 character boundary, never inside a character.
void copy_to_buffer(char* buf, std::size_t size, const std::string& s);

}  // namespace kvs::gui
