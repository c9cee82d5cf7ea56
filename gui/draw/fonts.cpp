#include "gui/draw/fonts.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/util/utf8.h"
#include "gui/draw/font_check.h"

namespace kvs::gui {
namespace {

struct FontFile {
    const char* name;
    const char* system_dir;
};
constexpr FontFile kDejaVu{"DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu"};
constexpr FontFile kMono{"DejaVuSansMono.ttf", "/usr/share/fonts/truetype/dejavu"};
constexpr FontFile kBold{"DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu"};
constexpr FontFile kWqy{"wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy"};

// Where the file is: $KVSCOPE_FONTS when set (and nowhere else), else the system folder.
std::string font_path(const FontFile& f) {
    const char* dir = std::getenv("KVSCOPE_FONTS");
    const std::filesystem::path p =
        std::filesystem::path(dir && *dir ? dir : f.system_dir) / f.name;
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) ? p.string() : std::string();
}

// Adds the font at `path` once font_problem() has passed its bytes (ImGui's stb_truetype would
// crash on a broken file); null, with the reason appended to `problems`, when it has not.
ImFont* add_checked_font(const std::string& path, float size_px, const ImFontConfig* cfg,
                         const ImWchar* ranges, std::string& problems) {
    FontBytes f = read_font(path);
    if (!f.problem.empty()) {
        problems += (problems.empty() ? "" : "; ") + f.problem;
        return nullptr;
    }
    // The atlas owns the copy and frees it with IM_FREE.
    void* data = IM_ALLOC(f.bytes.size());
    std::memcpy(data, f.bytes.data(), f.bytes.size());
    return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(data, static_cast<int>(f.bytes.size()),
                                                      size_px, cfg, ranges);
}

}  // namespace

FontInfo load_fonts(float scale, const std::string& extra_text, ImVector<ImWchar>& cjk) {
    // 0x1D2C..: modifier letters, for the transpose in "Kᵀ".
    static const ImWchar ranges[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x1D2C, 0x1D6A, 0x2000,
                                     0x22FF, 0x2500, 0x25FF, 0x2700, 0x27BF, 0};
    FontInfo info;
    info.size_px = 16.0f * scale;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFont* base = nullptr;
    std::string broken;  // fonts that are there but refused: "PATH: why; ..."
    const std::string dejavu = font_path(kDejaVu);
    if (!dejavu.empty()) {
        // Latin, Greek, the arrows/maths/box symbols the panels use, and the check marks.
        base = add_checked_font(dejavu, info.size_px, nullptr, ranges, broken);
    }
    if (base) {
        info.dejavu = true;
        const std::string wqy = font_path(kWqy);
        if (!wqy.empty()) {
            cjk.clear();
            ImFontGlyphRangesBuilder b;
            b.AddRanges(io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
            // Whole UTF-8 characters only: ImGui's builder stops at a NUL or a broken byte,
            // which a lesson file of junk can hold.
            for (std::size_t i = 0; i < extra_text.size();) {
                const std::size_t n = utf8_sequence_length(extra_text, i);
                if (n == 0) {
                    ++i;
                    continue;
                }
                unsigned int c = 0;
                ImTextCharFromUtf8(&c, extra_text.data() + i, extra_text.data() + i + n);
                if (c > 0 && c <= IM_UNICODE_CODEPOINT_MAX) b.AddChar(static_cast<ImWchar>(c));
                i += n;
            }
            b.BuildRanges(&cjk);
            ImFontConfig merge;
            merge.MergeMode = true;
            info.chinese = add_checked_font(wqy, info.size_px, &merge, cjk.Data, broken) != nullptr;
        }
        // In English: without the Chinese font a Chinese notice could not be read.
        if (!info.chinese)
            info.notice =
                "Chinese font (fonts-wqy-microhei) not found: Chinese text cannot be shown, so the "
                "window and the lessons stay in English";
        const std::string bold = font_path(kBold);
        if (!bold.empty())
            info.bold = add_checked_font(bold, info.size_px, nullptr, ranges, broken);
        const std::string mono = font_path(kMono);
        if (!mono.empty()) {
            static const ImWchar ascii[] = {0x0020, 0x00FF, 0};
            info.mono = add_checked_font(mono, info.size_px * 0.95f, nullptr, ascii, broken);
        }
    } else {
        ImFontConfig cfg;
        cfg.SizePixels = 13.0f * scale;
        base = io.Fonts->AddFontDefault(&cfg);
        info.size_px = cfg.SizePixels;
        info.notice =
            "DejaVu Sans not found: using ImGui's built-in font, which has no Chinese (install "
            "fonts-dejavu-core and fonts-wqy-microhei)";
    }
    if (!broken.empty()) {
        // One line for the window and one for stderr: which file, what is wrong with it.
        info.notice = "font file refused (" + escape_for_one_line(broken) + ")" +
                      (info.notice.empty() ? "" : "; " + info.notice);
        std::fprintf(stderr, "kvscope: %s\n", info.notice.c_str());
    }
    if (!info.mono) info.mono = base;
    io.Fonts->Build();
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    return info;
}

}  // namespace kvs::gui
