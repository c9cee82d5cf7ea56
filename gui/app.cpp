#include "gui/app.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <ctime>

#include "core/error.h"
#include "gui/key_queue.h"
#include "gui/screenshot.h"

namespace kvs::gui {
namespace {

WeightScale weight_scale_from(const std::string& s) {
    return s == "linear" ? WeightScale::Linear : s == "log" ? WeightScale::Log : WeightScale::Sqrt;
}

std::string timestamped_png() {
    char b[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(b, sizeof b, "kvscope-%Y%m%d-%H%M%S.png", std::localtime(&t));
    return b;
}

}  // namespace

App::App(GlWindow& window, EngineWorker& worker, UiState& ui, bool headless)
    : window_(window), worker_(worker), ui_(ui), headless_(headless) {
    ui_.fonts_dirty = true;
}

void App::begin_panel(const char* title, const char* id, float x, float y, float w, float h) {
    ImGui::SetNextWindowPos(ImVec2(x, y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_Always);
    std::string name = std::string(title) + "###" + id;
    ImGui::Begin(name.c_str(), nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
}

void App::handle_keys(FrameContext& f) {
    ImGuiIO& io = ImGui::GetIO();
    const int n = f.snap.steps();
    auto scrub = [&](int delta) {
        if (n == 0) return;
        const int cur = f.step < 0 ? n - 1 : f.step;
        const int next = std::clamp(cur + delta, 0, n - 1);
        ui_.view_step = next >= n - 1 ? -1 : next;
        ui_.playing = false;
    };
    auto font = [&](float delta) {
        ui_.settings.font_scale = std::clamp(ui_.settings.font_scale + delta, 0.5f, 4.0f);
        ui_.fonts_dirty = true;
    };
    for (const KeyPress& k : take_key_presses()) {
        const bool ctrl = k.mods & GLFW_MOD_CONTROL;
        const bool mod = k.mods & (GLFW_MOD_SHIFT | GLFW_MOD_CONTROL | GLFW_MOD_ALT);
        if (ctrl && k.key == GLFW_KEY_S) ui_.want_screenshot = true;
        if (k.key == GLFW_KEY_F1) ui_.show_help = !ui_.show_help;
        if (io.WantTextInput) continue;  // typing in the prompt or a number field
        switch (k.key) {
            case GLFW_KEY_ESCAPE:
                ui_.show_help = false;
                break;
            case GLFW_KEY_SPACE:
                if (!mod) request_step(f);
                break;
            case GLFW_KEY_RIGHT:
                if (mod)
                    scrub(+1);
                else
                    request_step(f);
                break;
            case GLFW_KEY_LEFT:
                if (mod) scrub(-1);
                break;
            case GLFW_KEY_LEFT_BRACKET:
                scrub(-1);
                break;
            case GLFW_KEY_RIGHT_BRACKET:
                scrub(+1);
                break;
            case GLFW_KEY_HOME:
                if (n > 0) ui_.view_step = 0;
                break;
            case GLFW_KEY_END:
                ui_.view_step = -1;
                break;
            case GLFW_KEY_EQUAL:
            case GLFW_KEY_KP_ADD:
                font(+0.125f);
                break;
            case GLFW_KEY_MINUS:
            case GLFW_KEY_KP_SUBTRACT:
                font(-0.125f);
                break;
            default:
                break;
        }
        if (ctrl) continue;  // Ctrl+letter is not the letter's shortcut
        switch (k.key) {
            case GLFW_KEY_P:
                ui_.playing = !ui_.playing && !f.snap.finished();
                ui_.view_step = -1;
                break;
            case GLFW_KEY_R:
                request_reset(f);
                break;
            case GLFW_KEY_C:
                cycle_cache(f);
                break;
            case GLFW_KEY_T:
                ui_.settings.theme = ui_.settings.theme == "dark" ? "light" : "dark";
                break;
            case GLFW_KEY_F:
                ui_.toggle_fullscreen = true;
                break;
            default:
                break;
        }
    }
}

void App::play(FrameContext& f) {
    if (!ui_.playing) return;
    if (f.snap.finished() || f.snap.sessions.empty()) {
        ui_.playing = false;
        return;
    }
    const double now = ImGui::GetTime();
    if (f.snap.busy || now - ui_.last_play_request < 1.0 / ui_.settings.play_speed) return;
    ui_.last_play_request = now;
    ui_.view_step = -1;
    if (f.snap.steps() == 0)
        worker_.prefill();
    else
        worker_.decode(1);
}

void App::draw_panels(FrameContext& f) {
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    const float fh = f.font_px;
    const float gap = 2;

    // Toolbar across the top; its height is what it needed last frame.
    ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(vp.x, 0), ImGuiCond_Always);
    ImGui::Begin("kvscope###toolbar", nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_AlwaysAutoResize |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    draw_toolbar(f);
    f.record_panel("toolbar");
    toolbar_h_ = ImGui::GetWindowSize().y;
    ImGui::End();

    const float top = toolbar_h_ + gap;
    const float h = vp.y - top;
    const bool lesson = static_cast<bool>(ui_.lesson_panel);
    const float lesson_w = lesson ? vp.x * 0.26f : 0;
    const float w = vp.x - lesson_w;
    const float left_w = std::floor(w * 0.52f);
    const float right_x = left_w + gap, right_w = w - right_x;
    const bool toy = f.model() && f.model()->is_toy();

    float y = top;
    const float tokens_h = std::max(fh * 7.5f, h * (toy ? 0.2f : 0.22f));
    begin_panel("Prompt and tokens", "tokens", 0, y, left_w, tokens_h);
    f.record_panel("tokens");
    draw_tokens(f);
    ImGui::End();
    y += tokens_h + gap;
    if (toy) {
        const float toy_h = h * 0.24f;
        begin_panel("Toy example: each head's output per token", "toy", 0, y, left_w, toy_h);
        f.record_panel("toy_table");
        draw_toy_table(f);
        ImGui::End();
        y += toy_h + gap;
    }
    begin_panel("Attention", "attention", 0, y, left_w, vp.y - y);
    f.record_panel("attention");
    draw_attention(f);
    ImGui::End();

    // Next token and Time get what their content needs; the KV cache takes the rest.
    const bool compare = f.snap.sessions.size() > 1;
    const float next_h = std::max(fh * 11.0f, h * 0.24f);
    const float time_h = std::max(fh * (compare ? 13.5f : 13.0f), h * 0.3f);
    const float kv_h = std::floor(h - next_h - time_h - 2 * gap);
    begin_panel("KV cache", "kv", right_x, top, right_w, kv_h);
    f.record_panel("kv_cache");
    draw_kv_cache(f);
    ImGui::End();
    begin_panel("Time", "time", right_x, top + kv_h + gap, right_w, time_h);
    f.record_panel("time");
    draw_time(f);
    ImGui::End();
    const float nt_y = top + kv_h + time_h + 2 * gap;
    begin_panel("Next token", "next", right_x, nt_y, right_w, vp.y - nt_y);
    f.record_panel("next_token");
    draw_next_token(f);
    ImGui::End();

    // The slot for a lesson panel (issue 7): a column at the right, when one is set.
    if (lesson) {
        begin_panel("Lesson", "lesson", w + gap, top, lesson_w - gap, h);
        f.record_panel("lesson");
        ui_.lesson_panel(f);
        ImGui::End();
    }
    f.toolbar_bottom = top;
    draw_messages(f);
    draw_help(f);
}

void App::frame(const std::string& screenshot, LayoutRecord* layout) {
    const float scale = ui_.settings.font_scale;
    if (ui_.fonts_dirty || scale != fonts_scale_) {
        fonts_ = load_fonts(scale);
        ui_.font_notice = fonts_.notice;
        ui_.font_notice_until = ImGui::GetTime() + 8;
        fonts_scale_ = scale;
        ui_.fonts_dirty = false;
        theme_name_.clear();  // sizes scale with the text
    }
    if (theme_name_ != ui_.settings.theme) {
        theme_ = apply_theme(ui_.settings.theme != "light", scale);
        theme_name_ = ui_.settings.theme;
    }
    if (ui_.toggle_fullscreen) {
        window_.toggle_fullscreen();
        ui_.toggle_fullscreen = false;
    }

    const auto t0 = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // Headless frames must not depend on where the (virtual) pointer happens to be.
    if (headless_) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    {
        auto lock = worker_.lock();
        const EngineSnapshot& snap = worker_.snapshot();
        if (snap.error_serial != ui_.seen_error_serial) {
            ui_.seen_error_serial = snap.error_serial;
            ui_.playing = false;
            ui_.error_until = ImGui::GetTime() + 10;
        }
        if (snap.generation != ui_.seen_generation) {
            ui_.seen_generation = snap.generation;
            ui_.view_step = -1;
        }
        FrameContext f{worker_,
                       snap,
                       ui_,
                       theme_,
                       palette_for(theme_.dark, weight_scale_from(ui_.settings.weight_scale)),
                       textures_,
                       layout};
        f.font_px = fonts_.size_px;
        const int n = snap.steps();
        f.step = n == 0 ? -1 : ui_.view_step < 0 ? n - 1 : std::min(ui_.view_step, n - 1);
        if (layout) {
            layout->clear_frame();
            layout->model = snap.model ? snap.model->name() : "";
            layout->theme = ui_.settings.theme;
            layout->backend = snap.backend_name;
            layout->step = f.step;
            layout->steps = n;
            layout->mask = f.pal.mask;
            layout->missing = f.pal.missing;
            layout->empty_row = f.pal.empty_row;
            layout->highlight = f.pal.highlight;
            auto byte = [](float v) { return static_cast<std::uint8_t>(std::lround(v * 255)); };
            layout->background = {byte(theme_.clear.x), byte(theme_.clear.y), byte(theme_.clear.z),
                                  255};
        }
        handle_keys(f);
        play(f);
        draw_panels(f);
    }
    ImGui::Render();
    build_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    int fw = 0, fhgt = 0;
    window_.framebuffer_size(fw, fhgt);
    if (layout) {
        const ImVec2 ds = ImGui::GetIO().DisplaySize;
        layout->width = fw;
        layout->height = fhgt;
        layout->scale_x = ds.x > 0 ? fw / ds.x : 1;
        layout->scale_y = ds.y > 0 ? fhgt / ds.y : 1;
    }
    glViewport(0, 0, fw, fhgt);
    glClearColor(theme_.clear.x, theme_.clear.y, theme_.clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!screenshot.empty()) save_framebuffer_png(screenshot, fw, fhgt);
    if (ui_.want_screenshot) {
        ui_.want_screenshot = false;
        const std::string path = timestamped_png();
        try {
            save_framebuffer_png(path, fw, fhgt);
            ui_.notice = "saved " + path;
        } catch (const Error& e) {
            ui_.notice = e.what();
        }
        ui_.notice_until = ImGui::GetTime() + 4;
    }
    glfwSwapBuffers(window_.handle());
}

}  // namespace kvs::gui
