#include "gui/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/utf8.h"

namespace kvs::gui {
namespace {

std::string with_unit(double v, const char* const* units, int n_units, double step,
                      const char* fmt_small) {
    int u = 0;
    while (u + 1 < n_units && std::fabs(v) >= step) {
        v /= step;
        ++u;
    }
    char buf[48];
    if (u == 0)
        std::snprintf(buf, sizeof buf, fmt_small, v, units[0]);
    else
        std::snprintf(buf, sizeof buf,
                      std::fabs(v) < 10    ? "%.2f %s"
                      : std::fabs(v) < 100 ? "%.1f %s"
                                           : "%.0f %s",
                      v, units[u]);
    return buf;
}

}  // namespace

std::string fmt_seconds(double s) {
    if (!std::isfinite(s)) return "n/a";
    char buf[32];
    const double a = std::fabs(s);
    if (a < 1e-3)
        std::snprintf(buf, sizeof buf, "%.0f µs", s * 1e6);
    else if (a < 1)
        std::snprintf(buf, sizeof buf, a < 0.01 ? "%.2f ms" : "%.1f ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", s);
    return buf;
}

std::string fmt_bytes(double b) {
    static const char* const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    return with_unit(b, u, 5, 1024, "%.0f %s");
}

std::string fmt_flops(double f) {
    static const char* const u[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
    return with_unit(f, u, 6, 1000, "%.0f %s");
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

}  // namespace kvs::gui

namespace kvs::gui {

void copy_to_buffer(char* buf, std::size_t size, const std::string& s) {
    if (size == 0) return;
    std::size_t n = std::min(s.size(), size - 1);
    // Back off continuation bytes, then the lead byte of the character they belong to.
    if (n < s.size())
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    s.copy(buf, n);
    buf[n] = '\0';
}

}  // namespace kvs::gui
