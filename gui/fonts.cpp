#include "gui/fonts.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <filesystem>

namespace kvs::gui {
namespace {

constexpr const char* kDejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
constexpr const char* kWqy = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc";

bool exists(const char* p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

FontInfo load_fonts(float scale) {
    FontInfo info;
    info.size_px = 16.0f * scale;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFont* base = nullptr;
    if (exists(kDejaVu)) {
        // Latin, Greek and the arrows/box symbols the panels use.
        static const ImWchar ranges[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x2000,
                                         0x22FF, 0x2500, 0x25FF, 0};
        base = io.Fonts->AddFontFromFileTTF(kDejaVu, info.size_px, nullptr, ranges);
    }
    if (base) {
        info.dejavu = true;
        if (exists(kWqy)) {
            ImFontConfig merge;
            merge.MergeMode = true;
            info.chinese = io.Fonts->AddFontFromFileTTF(
                               kWqy, info.size_px, &merge,
                               io.Fonts->GetGlyphRangesChineseSimplifiedCommon()) != nullptr;
        }
        if (!info.chinese) info.notice = "Chinese font (fonts-wqy-microhei) not found";
    } else {
        ImFontConfig cfg;
        cfg.SizePixels = 13.0f * scale;
        io.Fonts->AddFontDefault(&cfg);
        info.size_px = cfg.SizePixels;
        info.notice = std::string("DejaVu Sans not found (") + kDejaVu +
                      "): using ImGui's built-in font (install fonts-dejavu-core)";
    }
    io.Fonts->Build();
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    return info;
}

}  // namespace kvs::gui
