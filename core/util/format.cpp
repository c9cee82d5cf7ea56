#include "core/util/format.h"

#include <cmath>
#include <cstdio>

#include "core/util/utf8.h"

namespace kvs {
namespace {

// v in units[0]; stepped up while it reaches `step`, then printed with the one rounding rule.
std::string scaled(double v, const char* const* units, int n_units, double step) {
    int u = 0;
    while (u + 1 < n_units && std::fabs(v) >= step) {
        v /= step;
        ++u;
    }
    const double a = std::fabs(v);
    char buf[48];
    std::snprintf(buf, sizeof buf,
                  u == 0 || a >= 100 ? "%.0f %s"
                  : a >= 10          ? "%.1f %s"
                                     : "%.2f %s",
                  v, units[u]);
    return buf;
}

}  // namespace

std::string format_seconds(double s) {
    if (!std::isfinite(s)) return "n/a";
    // From ns: a counted least time on a datasheet GPU can be tens of nanoseconds (lesson 2).
    static const char* const u[] = {"ns", "µs", "ms", "s"};
    return scaled(s * 1e9, u, 4, 1000);
}

std::string format_bytes(double b) {
    static const char* const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    return scaled(b, u, 5, 1024);
}

std::string format_flops(double f) {
    static const char* const u[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
    return scaled(f, u, 6, 1000);
}

std::string format_si(double v) {
    static const char* const u[] = {"", "k", "M", "G", "T", "P"};
    return scaled(v, u, 6, 1000);
}

std::string visible_piece(const std::string& piece) {
    std::string out;
    for (std::size_t i = 0; i < piece.size();) {
        const unsigned char c = static_cast<unsigned char>(piece[i]);
        const std::size_t n = utf8_sequence_length(piece, i);
        if (c == ' ') {
            out += "\xC2\xB7";  // U+00B7 middle dot
        } else if (n == 0 || c < 0x20 || c == 0x7F) {
            // Control bytes, and bytes that are not (a whole) UTF-8 character: a merged
            // token may hold half of one.
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", c);
            out += buf;
        } else {
            out.append(piece, i, n);
            i += n;
            continue;
        }
        ++i;
    }
    return out;
}

}  // namespace kvs
