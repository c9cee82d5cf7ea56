#pragma once
// Numbers and token pieces as every view prints them (window panels, lesson reports, command
// lines): one rounding rule, three significant digits and a unit. The unit steps up at 1024
// (bytes) or 1000 (FLOPs, plain counts, seconds); the figure then keeps two decimals below 10,
// one below 100, none above ("3.52 KiB", "41.2 ms", "950 MFLOP"); the smallest unit prints a
// whole number ("512 B", "950 FLOP").
#include <string>

namespace kvs {

std::string format_seconds(
    double s);                       // "29 ns", "830 µs", "12.4 ms", "1.25 s"; "n/a" if not finite
std::string format_bytes(double b);  // binary units: "512 B", "4.00 KiB", "1.23 MiB"
std::string format_flops(double f);  // "950 FLOP", "1.20 MFLOP", "3.40 GFLOP"
std::string format_si(double v);     // decimal units for big counts: "13.5 G"

// A token piece for a chip or a label: spaces shown as '·', control bytes and bytes that are
// not well-formed UTF-8 as <0x..>; every character that is kept is a whole UTF-8 sequence.
std::string visible_piece(const std::string& piece);

}  // namespace kvs
