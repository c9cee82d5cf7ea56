// The roofline picture (lessonlib/roofline.h): FLOP per byte across, FLOP/s up, both on log
// scales; the roof of the GPU (memory slope up to the ridge, then the compute peak), the ridge
// named with its source, the prefill and decode points of the @scale query large and labelled,
// their neighbours at other batch sizes and prompt lengths small (hover names them).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/format.h"
#include "gui/draw/text.h"
#include "gui/panels/lesson.h"
#include "gui/state/strings.h"
#include "lessonlib/roofline.h"

namespace kvs::gui {

void draw_roofline(FrameContext& f, const Roofline& r, ImVec2 size) {
    const float fh = f.font_px;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    if (r.points.empty() || r.peak_flops <= 0 || r.bandwidth <= 0) return;
    char b[200];
    std::snprintf(b, sizeof b, tr("Roofline of %s (datasheet): FLOP/s against FLOP per byte"),
                  r.roof_name.c_str());
    dl->AddText(p0, ImGui::GetColorU32(ImGuiCol_Text), clipped(b, size.x).c_str());
    const std::string note = clipped(
        tr("counted from shapes; each point's FLOP/s is its least time at the GPU's peak"), size.x);
    dl->AddText(ImVec2(p0.x, p0.y + fh * 1.2f), f.theme.muted_text, note.c_str());

    // Axes: decades that hold every point and the ridge.
    double x_lo = r.ridge(), x_hi = r.ridge(), y_lo = r.peak_flops, y_hi = r.peak_flops;
    for (const auto& p : r.points) {
        if (p.intensity <= 0 || p.flops_per_second <= 0) continue;
        x_lo = std::min(x_lo, p.intensity);
        x_hi = std::max(x_hi, p.intensity);
        y_lo = std::min(y_lo, p.flops_per_second);
    }
    // A point within a fifth of a decade's edge gets the decade below, so none sits on the axis.
    x_lo = std::pow(10, std::floor(std::log10(x_lo * 0.8)));
    x_hi = std::pow(10, std::ceil(std::log10(x_hi * 1.01)));
    y_lo = std::pow(10, std::floor(std::log10(y_lo * 0.8)));
    y_hi = std::pow(10, std::ceil(std::log10(y_hi * 1.01)));
    const float left = p0.x + fh * 4.5f, right = p0.x + size.x - fh * 0.5f;
    const float top = p0.y + fh * 3.0f, bottom = p0.y + size.y - fh * 2.6f;
    if (right - left < fh * 8 || bottom - top < fh * 5) return;
    const auto tx = [&](double x) {
        return left +
               float((std::log10(x) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo))) *
                   (right - left);
    };
    const auto ty = [&](double y) {
        return bottom -
               float((std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo))) *
                   (bottom - top);
    };
    dl->AddRect(ImVec2(left, top), ImVec2(right, bottom), f.theme.axis);
    for (double x = x_lo; x <= x_hi * 1.001; x *= 10) {
        dl->AddLine(ImVec2(tx(x), top), ImVec2(tx(x), bottom), f.theme.grid);
        std::snprintf(b, sizeof b, "%g", x);
        const float w = ImGui::CalcTextSize(b).x;
        dl->AddText(ImVec2(std::clamp(tx(x) - w * 0.5f, left, right - w), bottom + 2),
                    f.theme.muted_text, b);
    }
    for (double y = y_lo; y <= y_hi * 1.001; y *= 10) {
        dl->AddLine(ImVec2(left, ty(y)), ImVec2(right, ty(y)), f.theme.grid);
        const std::string t = format_si(y);
        const float w = ImGui::CalcTextSize(t.c_str()).x;
        dl->AddText(ImVec2(left - w - 3, std::clamp(ty(y) - fh * 0.5f, top, bottom - fh)),
                    f.theme.muted_text, t.c_str());
    }
    const std::string xl = tr("FLOP per byte (counted)");
    dl->AddText(ImVec2(right - ImGui::CalcTextSize(xl.c_str()).x, bottom + fh * 1.2f),
                f.theme.muted_text, xl.c_str());
    dl->AddText(ImVec2(left, bottom + fh * 1.2f), f.theme.muted_text, "FLOP/s");

    // The roof: bandwidth x intensity up to the ridge, the peak after it.
    const ImU32 roof = f.theme.marker;
    const double ridge = r.ridge();
    const double x_start = std::max(x_lo, y_lo / r.bandwidth);  // where the slope enters the box
    dl->AddLine(ImVec2(tx(x_start), ty(x_start * r.bandwidth)), ImVec2(tx(ridge), ty(r.peak_flops)),
                roof, 2.0f);
    dl->AddLine(ImVec2(tx(ridge), ty(r.peak_flops)), ImVec2(tx(x_hi), ty(r.peak_flops)), roof,
                2.0f);
    for (float y = ty(r.peak_flops); y < bottom; y += fh * 0.5f)  // the ridge, dashed
        dl->AddLine(ImVec2(tx(ridge), y), ImVec2(tx(ridge), std::min(bottom, y + fh * 0.25f)),
                    roof);
    std::snprintf(b, sizeof b, tr("ridge %.0f FLOP/B (datasheet)"), ridge);
    const float rw = ImGui::CalcTextSize(b).x;
    const float rx =
        tx(ridge) + fh * 0.3f + rw <= right ? tx(ridge) + fh * 0.3f : tx(ridge) - fh * 0.3f - rw;
    dl->AddText(ImVec2(rx, bottom - fh * 1.3f), roof, b);

    // The points: neighbours small, the query's own large with a label.
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const RooflinePoint* hovered = nullptr;
    float label_y = top + fh * 0.3f;
    for (const auto& p : r.points) {
        if (p.intensity <= 0 || p.flops_per_second <= 0) continue;
        const ImVec2 c(tx(p.intensity), ty(p.flops_per_second));
        const ImU32 col = f.theme.series[p.phase == Phase::Prefill ? 0 : 1];
        const float rad = p.asked ? fh * 0.45f : fh * 0.22f;
        if (p.phase == Phase::Prefill)
            dl->AddCircleFilled(c, rad, col);
        else
            dl->AddRectFilled(ImVec2(c.x - rad, c.y - rad), ImVec2(c.x + rad, c.y + rad), col);
        if (std::hypot(mouse.x - c.x, mouse.y - c.y) < std::max(rad, fh * 0.4f)) hovered = &p;
        if (!p.asked) continue;
        // Labels in the top left corner, a line to their point: they never cover one another.
        std::snprintf(b, sizeof b,
                      p.phase == Phase::Prefill
                          ? tr("prefill, batch %d x %d tokens: %.0f FLOP/B")
                          : tr("decode step, batch %d at %d keys: %.1f FLOP/B"),
                      p.batch, p.context, p.intensity);
        dl->AddText(ImVec2(left + fh * 0.4f, label_y), col, b);
        dl->AddLine(ImVec2(left + fh * 0.4f + ImGui::CalcTextSize(b).x + 2, label_y + fh * 0.5f), c,
                    col);
        label_y += fh * 1.2f;
    }
    if (hovered && ImGui::IsWindowHovered()) {
        ImGui::BeginTooltip();
        ImGui::Text(hovered->phase == Phase::Prefill
                        ? tr("prefill, batch %d x %d tokens: %.0f FLOP/B")
                        : tr("decode step, batch %d at %d keys: %.1f FLOP/B"),
                    hovered->batch, hovered->context, hovered->intensity);
        ImGui::Text("%sFLOP/s", format_si(hovered->flops_per_second).c_str());
        ImGui::EndTooltip();
    }
}

}  // namespace kvs::gui
