#include "gui/views/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kvs::gui {
namespace {

struct Stop {
    float t;
    float r, g, b;
};

// Hand-picked stops: dark purple, violet, rose, orange, pale yellow. Every stop is saturated,
// so no weight can be mistaken for the grey of a masked cell.
constexpr std::array<Stop, 5> kSequential{{{0.00f, 20, 10, 60},
                                           {0.25f, 90, 30, 140},
                                           {0.50f, 190, 50, 110},
                                           {0.75f, 245, 130, 40},
                                           {1.00f, 252, 240, 110}}};

std::uint8_t byte(float x) {
    return static_cast<std::uint8_t>(std::clamp(std::lround(x), 0L, 255L));
}

}  // namespace

const char* weight_scale_name(WeightScale s) {
    switch (s) {
        case WeightScale::Linear:
            return "linear";
        case WeightScale::Sqrt:
            return "sqrt";
        case WeightScale::Log:
            return "log";
    }
    return "?";
}

float scale_weight(float w, WeightScale s) {
    w = std::clamp(std::isfinite(w) ? w : 0.0f, 0.0f, 1.0f);
    switch (s) {
        case WeightScale::Linear:
            return w;
        case WeightScale::Sqrt:
            return std::sqrt(w);
        case WeightScale::Log:
            // 1e-4 .. 1 spread over 0 .. 1.
            return w <= 1e-4f ? 0.0f : (std::log10(w) + 4.0f) / 4.0f;
    }
    return w;
}

Rgba sequential_colour(float t) {
    t = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f);
    std::size_t i = 1;
    while (i + 1 < kSequential.size() && t > kSequential[i].t) ++i;
    const Stop& a = kSequential[i - 1];
    const Stop& b = kSequential[i];
    const float f = (t - a.t) / (b.t - a.t);
    return {byte(a.r + f * (b.r - a.r)), byte(a.g + f * (b.g - a.g)), byte(a.b + f * (b.b - a.b)),
            255};
}

Rgba weight_colour(float w, WeightScale s) {
    return sequential_colour(scale_weight(w, s));
}

Rgba signed_colour(float v, float scale) {
    const float x = scale > 0 && std::isfinite(v) ? std::clamp(v / scale, -1.0f, 1.0f) : 0.0f;
    // Neutral (0) is a warm off-white; -1 deep blue; +1 deep red.
    const float n[3] = {238, 234, 226}, lo[3] = {30, 80, 190}, hi[3] = {200, 30, 40};
    const float* e = x < 0 ? lo : hi;
    const float f = std::fabs(x);
    return {byte(n[0] + f * (e[0] - n[0])), byte(n[1] + f * (e[1] - n[1])),
            byte(n[2] + f * (e[2] - n[2])), 255};
}

HeatmapPalette palette_for(bool dark_theme, WeightScale scale) {
    HeatmapPalette p;
    p.mask = dark_theme ? Rgba{78, 78, 78, 255} : Rgba{200, 200, 200, 255};
    p.missing = dark_theme ? Rgba{40, 70, 60, 255} : Rgba{170, 210, 190, 255};
    p.empty_row = dark_theme ? Rgba{30, 90, 120, 255} : Rgba{120, 190, 230, 255};
    // On the light background the marks (also drawn as text) are darker, to keep WCAG AA's
    // contrast: 4.5:1 for text, 3:1 for the marks (tests/gui/test_gui_views.cpp measures it).
    p.highlight = dark_theme ? Rgba{0, 220, 255, 255} : Rgba{0, 115, 165, 255};
    p.read = dark_theme ? Rgba{60, 200, 90, 255} : Rgba{25, 135, 55, 255};
    p.recomputed = dark_theme ? Rgba{255, 120, 40, 255} : Rgba{185, 75, 0, 255};
    p.scale = scale;
    return p;
}

Rgba ink_on(Rgba bg) {
    const float l = 0.299f * bg.r + 0.587f * bg.g + 0.114f * bg.b;
    return l > 140 ? Rgba{0, 0, 0, 255} : Rgba{255, 255, 255, 255};
}

}  // namespace kvs::gui
