#include "gui/draw/theme.h"

namespace kvs::gui {

ImU32 to_u32(const Rgba& c) {
    return IM_COL32(c.r, c.g, c.b, c.a);
}

ThemeColours apply_theme(bool dark, float scale) {
    ImGuiStyle& style = ImGui::GetStyle();
    style = ImGuiStyle();
    if (dark)
        ImGui::StyleColorsDark(&style);
    else
        ImGui::StyleColorsLight(&style);
    style.WindowRounding = 4;
    style.FrameRounding = 3;
    style.GrabRounding = 3;
    style.WindowPadding = ImVec2(8, 6);
    style.ItemSpacing = ImVec2(8, 5);
    style.WindowBorderSize = 1;
    if (!dark) {
        // WCAG AA on the light background (tests/gui/test_gui_views.cpp measures it): text at
        // 4.5:1 (ImGui's default disabled grey gives 2.7:1), and every control outlined at 3:1
        // (ImGui's default filled frames and buttons are all but the background's colour).
        ImVec4* c = style.Colors;
        c[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.96f, 1.0f);
        c[ImGuiCol_TextDisabled] = ImVec4(0.38f, 0.38f, 0.40f, 1.0f);
        c[ImGuiCol_Border] = ImVec4(0.42f, 0.42f, 0.46f, 1.0f);
        c[ImGuiCol_CheckMark] = ImVec4(0.05f, 0.33f, 0.70f, 1.0f);
        c[ImGuiCol_SliderGrab] = ImVec4(0.10f, 0.38f, 0.75f, 1.0f);
        c[ImGuiCol_SliderGrabActive] = ImVec4(0.05f, 0.30f, 0.65f, 1.0f);
        c[ImGuiCol_Tab] = ImVec4(0.80f, 0.86f, 0.95f, 1.0f);
        style.FrameBorderSize = 1;
        style.TabBorderSize = 1;
    }
    style.ScaleAllSizes(scale);
    // Filled shapes without an anti-aliased fringe: with llvmpipe (software GL, as under Xvfb
    // or in a VM) the fringes of every chip, frame and bar cost about an eighth of a frame;
    // the small rounded corners look the same. Lines (the plots) stay anti-aliased.
    style.AntiAliasedFill = false;
    const ImVec4 bg = style.Colors[ImGuiCol_WindowBg];
    style.Colors[ImGuiCol_WindowBg].w = 0.0f;
    // Title bars likewise: their colour is all but the background's in both themes, and they
    // are another full row of pixels per panel.
    style.Colors[ImGuiCol_TitleBg].w = 0.0f;
    style.Colors[ImGuiCol_TitleBgActive] = style.Colors[ImGuiCol_TitleBg];
    style.Colors[ImGuiCol_TitleBgCollapsed] = style.Colors[ImGuiCol_TitleBg];

    ThemeColours t;
    t.dark = dark;
    t.clear = ImVec4(bg.x, bg.y, bg.z, 1.0f);
    if (dark) {
        t.chip_prompt = IM_COL32(52, 92, 160, 255);
        t.chip_generated = IM_COL32(40, 125, 80, 255);
        t.chip_current = IM_COL32(215, 120, 20, 255);
        t.chip_chosen = IM_COL32(240, 200, 60, 255);
        t.chip_pending = IM_COL32(80, 80, 88, 255);
        t.chip_text = IM_COL32(245, 245, 245, 255);
        t.series[0] = IM_COL32(90, 170, 255, 255);
        t.series[1] = IM_COL32(255, 120, 90, 255);
        t.series_other = IM_COL32(190, 190, 190, 200);
        t.axis = IM_COL32(180, 180, 180, 255);
        t.grid = IM_COL32(255, 255, 255, 30);
        t.muted_text = IM_COL32(160, 160, 170, 255);
        t.error_text = IM_COL32(255, 110, 100, 255);
        t.warning_text = IM_COL32(240, 190, 80, 255);
        t.ok_text = IM_COL32(120, 210, 140, 255);
        t.marker = IM_COL32(255, 255, 255, 90);
        t.panel_bg = ImGui::ColorConvertFloat4ToU32(t.clear);
    } else {
        t.chip_prompt = IM_COL32(160, 195, 240, 255);
        t.chip_generated = IM_COL32(150, 215, 170, 255);
        t.chip_current = IM_COL32(250, 170, 70, 255);
        t.chip_chosen = IM_COL32(200, 150, 0, 255);
        t.chip_pending = IM_COL32(215, 215, 220, 255);
        t.chip_text = IM_COL32(20, 20, 20, 255);
        t.series[0] = IM_COL32(30, 100, 200, 255);
        t.series[1] = IM_COL32(190, 60, 30, 255);
        t.series_other = IM_COL32(120, 120, 120, 200);
        t.axis = IM_COL32(80, 80, 80, 255);
        t.grid = IM_COL32(0, 0, 0, 30);
        t.muted_text = IM_COL32(100, 100, 110, 255);
        t.error_text = IM_COL32(190, 30, 20, 255);
        t.warning_text = IM_COL32(160, 100, 0, 255);
        t.ok_text = IM_COL32(20, 130, 50, 255);
        t.marker = IM_COL32(0, 0, 0, 90);
        t.panel_bg = ImGui::ColorConvertFloat4ToU32(t.clear);
    }
    return t;
}

}  // namespace kvs::gui
