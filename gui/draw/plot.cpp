#include "gui/draw/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/draw/text.h"
#include "gui/state/strings.h"
#include "gui/views/plot_scale.h"

namespace kvs::gui {
namespace {

std::string default_fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float on, float off) {
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    if (len < 1e-3f) return;
    for (float t = 0; t < len; t += on + off) {
        const float t1 = std::min(t + on, len);
        dl->AddLine(ImVec2(a.x + dx * t / len, a.y + dy * t / len),
                    ImVec2(a.x + dx * t1 / len, a.y + dy * t1 / len), c, 1.5f);
    }
}

}  // namespace

void draw_legend(const std::vector<PlotSeries>& series, ImU32 text, float max_w) {
    const float fh = ImGui::GetFontSize();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float x0 = ImGui::GetCursorScreenPos().x;
    const float right = max_w > 0 ? x0 + max_w : x0 + ImGui::GetContentRegionAvail().x;
    float end = x0;  // where the last item ended
    for (std::size_t i = 0; i < series.size(); ++i) {
        const float item_w = fh * 1.7f + ImGui::CalcTextSize(series[i].label.c_str()).x;
        if (i && end + fh + item_w <= right) ImGui::SameLine(0, fh);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        end = p.x + item_w;
        const ImVec2 a(p.x, p.y + fh * 0.55f), b(p.x + fh * 1.5f, p.y + fh * 0.55f);
        if (series[i].dashed)
            dashed_line(dl, a, b, series[i].colour, 4, 3);
        else
            dl->AddLine(a, b, series[i].colour, 3);
        ImGui::Dummy(ImVec2(fh * 1.7f, fh));
        ImGui::SameLine(0, 0);
        ImGui::PushStyleColor(ImGuiCol_Text, text);
        ImGui::TextUnformatted(series[i].label.c_str());
        ImGui::PopStyleColor();
    }
}

namespace {

// The y axis's grid lines: decades on a log scale, halves on a linear one, no more than fit the
// plot's height.
std::vector<double> y_ticks(bool log_y, double lo, double hi, float size_y, float fh) {
    std::vector<double> ticks;
    if (log_y) {
        for (double d = lo; d <= hi * 1.0001; d *= 10) ticks.push_back(d);
        while (ticks.size() > 5) {  // thin out many decades
            std::vector<double> t2;
            for (std::size_t i = 0; i < ticks.size(); i += 2) t2.push_back(ticks[i]);
            ticks = t2;
        }
    } else {
        for (int i = 0; i <= 2; ++i) ticks.push_back(lo + (hi - lo) * i / 2);
    }
    // No more labels than fit the height (the plot is about 1.3 + 1.2 lines shorter).
    const std::size_t fit =
        std::max<std::size_t>(2, std::size_t((size_y - fh * 2.5f) / (fh * 1.05f)) + 1);
    while (ticks.size() > fit) {
        std::vector<double> t2;
        for (std::size_t i = 0; i < ticks.size(); i += 2) t2.push_back(ticks[i]);
        if (t2.back() != ticks.back()) t2.push_back(ticks.back());
        if (t2.size() >= ticks.size()) break;
        ticks = t2;
        if (ticks.size() == 2) break;
    }
    return ticks;
}

// Each series' legend entry: its label in lines, where it goes and its width.
struct LegendEntry {
    std::vector<std::string> lines;
    float w = 0;
};

// The legend laid out for a plot area `area_w` wide and `area_h` high inside a box `box_w` wide:
// top right in the area where every label fits there on one line and all of them take at most
// 40% of its height; else a band over the area, each label wrapped to the box's width (a
// projector's text size in a narrow column). Returns the band's height (0: inside the area).
float layout_legend(const std::vector<PlotSeries>& series, float area_w, float area_h, float box_w,
                    float fh, std::vector<LegendEntry>& out) {
    out.clear();
    const float swatch = fh * 1.2f;
    bool inside = series.size() * fh <= area_h * 0.4f;
    for (const auto& s : series) {
        const float w = ImGui::CalcTextSize(s.label.c_str()).x;
        if (w + swatch + fh * 0.5f > area_w) inside = false;
        out.push_back({{s.label}, w});
    }
    if (inside) return 0;
    float h = 0;
    for (auto& e : out) {
        e.lines = wrapped_lines(e.lines.front(), box_w - swatch);
        e.w = 0;
        for (const auto& l : e.lines) e.w = std::max(e.w, ImGui::CalcTextSize(l.c_str()).x);
        h += e.lines.size() * fh;
    }
    return h + fh * 0.6f;  // and the top y label's half line
}

// Draws the legend: from (x_right, top) right-aligned inside the area, or left-aligned from
// (x_left, top) in its band; returns each entry's rectangle.
std::vector<std::pair<std::string, Rect>> draw_plot_legend(ImDrawList* dl,
                                                           const std::vector<PlotSeries>& series,
                                                           const std::vector<LegendEntry>& entries,
                                                           bool band, ImVec2 at, float right,
                                                           ImU32 text, float fh) {
    std::vector<std::pair<std::string, Rect>> drawn;
    float y = at.y;
    const float swatch = fh * 1.2f;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const LegendEntry& e = entries[i];
        const float x = band ? at.x + swatch : right - e.w - fh * 0.2f;
        const ImVec2 a(x - fh * 1.1f, y + fh * 0.5f), b(x - fh * 0.2f, y + fh * 0.5f);
        if (series[i].dashed)
            dashed_line(dl, a, b, series[i].colour, 4, 3);
        else
            dl->AddLine(a, b, series[i].colour, 3);
        float ly = y;
        for (const auto& line : e.lines) {
            dl->AddText(ImVec2(x, ly), text, line.c_str());
            ly += fh;
        }
        drawn.push_back({series[i].label, Rect{a.x, y, x + e.w - a.x, ly - y}});
        y = ly;
    }
    return drawn;
}

// The title, and the scale where it was chosen from the data; a title wider than its plot
// takes a second line, and past that ends in ".." (the axes say the rest). Returns its height,
// with room under it for the top y label, which is centred on the plot area's top edge.
float draw_title(ImDrawList* dl, const PlotOptions& o, bool log_y, ImVec2 p0, float w, float fh) {
    std::string title = o.title ? o.title : "";
    if (o.choose_scale) {
        char b[256];
        std::snprintf(b, sizeof b, log_y ? tr("%s, log scale") : tr("%s, linear scale"),
                      title.c_str());
        title = b;
    }
    std::vector<std::string> lines = wrapped_lines(title, w);
    if (lines.size() > 2) {
        lines[1] = clipped(lines[1] + " " + lines[2] + "..", w);
        lines.resize(2);
    }
    for (std::size_t i = 0; i < lines.size(); ++i)
        dl->AddText(ImVec2(p0.x, p0.y + i * fh), o.text, clipped(lines[i], w).c_str());
    return std::max<std::size_t>(1, lines.size()) * fh + fh * 0.6f;
}

// Each series' line. More points than pixels (thousands of steps): each pixel column draws
// its points' lowest and highest value, so the line costs the plot's width, not the number of
// steps, and keeps every spike.
template <class Tx, class Ty>
void draw_lines(ImDrawList* dl, const std::vector<PlotSeries>& series, bool log_y, std::size_t n,
                float width, const Tx& tx, const Ty& ty) {
    const std::size_t per_px =
        std::max<std::size_t>(1, n / std::max<std::size_t>(1, std::size_t(width)));
    for (const auto& s : series) {
        ImVec2 prev;
        bool have = false;
        auto to = [&](ImVec2 p) {
            if (have) {
                if (s.dashed)
                    dashed_line(dl, prev, p, s.colour, 5, 4);
                else
                    dl->AddLine(prev, p, s.colour, 2);
            }
            prev = p;
            have = true;
        };
        for (std::size_t x0 = 0; x0 < s.y.size(); x0 += per_px) {
            double lo_v = INFINITY, hi_v = -INFINITY;
            std::size_t lo_x = x0, hi_x = x0;
            for (std::size_t x = x0; x < std::min(s.y.size(), x0 + per_px); ++x) {
                const double v = s.y[x];
                if (!std::isfinite(v) || (log_y && v <= 0)) continue;
                if (v < lo_v) lo_v = v, lo_x = x;
                if (v > hi_v) hi_v = v, hi_x = x;
            }
            if (!std::isfinite(lo_v)) {
                have = false;
                continue;
            }
            if (lo_x <= hi_x) {
                to(ImVec2(tx(lo_x), ty(lo_v)));
                if (hi_x != lo_x) to(ImVec2(tx(hi_x), ty(hi_v)));
            } else {
                to(ImVec2(tx(hi_x), ty(hi_v)));
                to(ImVec2(tx(lo_x), ty(lo_v)));
            }
            if (s.y.size() < 40) dl->AddCircleFilled(prev, 2.5f, s.colour);
        }
    }
}

}  // namespace

PlotDrawn draw_plot(const char* id, ImVec2 size, const std::vector<PlotSeries>& series,
                    const PlotOptions& o) {
    auto fmt = o.fmt ? o.fmt : default_fmt;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = ImGui::GetFontSize();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(id, ImVec2(std::max(size.x, 40.0f), std::max(size.y, 40.0f)));
    const bool hovered = ImGui::IsItemHovered();
    const ImVec2 p1(p0.x + std::max(size.x, 40.0f), p0.y + std::max(size.y, 40.0f));
    PlotDrawn drawn;
    drawn.rect = Rect{p0.x, p0.y, p1.x - p0.x, p1.y - p0.y};
    bool log_y = o.log_y;
    if (o.choose_scale) {
        std::vector<std::span<const double>> ys;
        for (const auto& s : series) ys.push_back(s.y);
        log_y = choose_log_y(ys);
    }
    drawn.log_y = log_y;
    const float title_h = draw_title(dl, o, log_y, p0, p1.x - p0.x, fh);
    std::size_t n = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& s : series) {
        n = std::max(n, s.y.size());
        for (double v : s.y) {
            if (!std::isfinite(v) || (log_y && v <= 0)) continue;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (n == 0 || !std::isfinite(lo)) {
        dl->AddRect(ImVec2(p0.x, p0.y + title_h), p1, o.axis);
        dl->AddText(ImVec2(p0.x + fh * 0.5f, p0.y + title_h + fh * 0.5f), o.text,
                    tr("no steps yet"));
        return drawn;
    }
    if (log_y) {
        lo = std::pow(10.0, std::floor(std::log10(lo)));
        hi = std::pow(10.0, std::ceil(std::log10(hi)));
        if (hi <= lo) hi = lo * 10;
    } else {
        lo = 0;
        if (hi <= 0) hi = 1;
        hi *= 1.05;
    }
    // The legend's band over the plot area, where its labels do not fit inside it (a first
    // guess of the area's width: the box less a y label's room).
    std::vector<LegendEntry> legend;
    float band_h = 0;
    if (o.legend)
        band_h = layout_legend(series, (p1.x - p0.x) - fh * 4.5f,
                               (p1.y - p0.y) - title_h - fh * 1.2f, p1.x - p0.x, fh, legend);
    const float above = title_h + band_h;
    const std::vector<double> ticks =
        y_ticks(log_y, lo, hi, size.y - band_h - (title_h - fh * 1.3f), fh);
    std::vector<std::string> labels;
    float label_w = 0;
    for (double t : ticks) {
        labels.push_back(fmt(t));
        label_w = std::max(label_w, ImGui::CalcTextSize(labels.back().c_str()).x);
    }
    // Plot area: below the title, above the x labels, right of the widest y label.
    const float left = p0.x + label_w + fh * 0.4f, top = p0.y + above;
    const float right = p1.x - fh * 0.3f, bottom = p1.y - fh * 1.2f;
    // Drawn last, over the lines.
    auto put_legend = [&] {
        if (o.legend)
            drawn.legend = draw_plot_legend(dl, series, legend, band_h > 0,
                                            ImVec2(p0.x, band_h > 0 ? p0.y + title_h : top + 2),
                                            right, o.text, fh);
    };
    if (right - left < 10 || bottom - top < 10) {
        put_legend();
        return drawn;
    }
    dl->AddRect(ImVec2(left, top), ImVec2(right, bottom), o.axis);
    auto ty = [&](double v) -> float {
        const double f = log_y
                             ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                             : (v - lo) / (hi - lo);
        return static_cast<float>(bottom - f * (bottom - top));
    };
    const float span = n > 1 ? static_cast<float>(n - 1) : 1.0f;
    auto tx = [&](std::size_t x) { return left + (right - left) * static_cast<float>(x) / span; };

    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const float y = ty(ticks[i]);
        dl->AddLine(ImVec2(left, y), ImVec2(right, y), o.grid);
        const float w = ImGui::CalcTextSize(labels[i].c_str()).x;
        dl->AddText(ImVec2(left - w - 3, y - fh * 0.5f), o.text, labels[i].c_str());
    }
    // x labels: first and last, or every one.
    auto xval = [&](std::size_t x) {
        return x < o.x_values.size() ? o.x_values[x] : static_cast<double>(x);
    };
    char b[48];
    if (o.label_every_x && n > 1) {
        for (std::size_t x = 0; x < n; ++x) {
            std::snprintf(b, sizeof b, "%.0f", xval(x));
            const float w = ImGui::CalcTextSize(b).x;
            dl->AddText(ImVec2(std::clamp(tx(x) - w * 0.5f, left, right - w), bottom + 1), o.text,
                        b);
        }
    } else {
        std::snprintf(b, sizeof b, "%s %.0f", o.x_label, xval(0));
        const float first_end = left + ImGui::CalcTextSize(b).x;
        dl->AddText(ImVec2(left, bottom + 1), o.text, b);
        // The last x where it does not run into the first.
        std::snprintf(b, sizeof b, "%.0f", xval(n - 1));
        const float lw = ImGui::CalcTextSize(b).x;
        if (right - lw > first_end + fh * 0.5f)
            dl->AddText(ImVec2(right - lw, bottom + 1), o.text, b);
    }

    dl->PushClipRect(ImVec2(left, top - 1), ImVec2(right + 1, bottom + 1), true);
    if (o.marker_x >= 0 && static_cast<std::size_t>(o.marker_x) < n)
        dl->AddLine(ImVec2(tx(o.marker_x), top), ImVec2(tx(o.marker_x), bottom), o.marker, 2);
    draw_lines(dl, series, log_y, n, right - left, tx, ty);
    dl->PopClipRect();
    put_legend();
    if (hovered) {
        const float mx = ImGui::GetIO().MousePos.x;
        const auto x = static_cast<std::size_t>(
            std::clamp(std::lround((mx - left) / (right - left) * span), 0L, long(n - 1)));
        ImGui::BeginTooltip();
        ImGui::Text("%s %.0f", o.x_label, xval(x));
        for (const auto& s : series)
            if (x < s.y.size() && std::isfinite(s.y[x]))
                ImGui::Text("%s: %s", s.label.c_str(), fmt(s.y[x]).c_str());
        ImGui::EndTooltip();
    }
    return drawn;
}

}  // namespace kvs::gui
