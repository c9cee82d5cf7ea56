#include "gui/format.h"

#include <cmath>
#include <cstdio>

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
    for (unsigned char c : piece) {
        if (c == ' ') {
            out += "\xC2\xB7";  // U+00B7 middle dot
        } else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace kvs::gui
