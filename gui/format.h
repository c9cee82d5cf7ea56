#pragma once
// Numbers as the panels print them: short, with units.
#include <string>

namespace kvs::gui {

std::string fmt_seconds(double s);  // "830 µs", "12.4 ms", "1.25 s"
std::string fmt_bytes(double b);    // "512 B", "4.0 KiB", "1.2 MiB"
std::string fmt_flops(double f);    // "950 FLOP", "1.2 MFLOP", "3.4 GFLOP"
// A token piece for a chip or a label: spaces shown as '·', control bytes as <0x..>.
std::string visible_piece(const std::string& piece);

}  // namespace kvs::gui
