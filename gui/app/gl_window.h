#pragma once
// The GLFW window with an OpenGL 3.3 core context and Dear ImGui on top. Every way this can fail
// on a user's machine (no display, no GLFW, OpenGL older than 3.3) is a kvs::Error with one line
// that says what to do instead.
#include <string>
#include <utility>
#include <vector>

struct GLFWwindow;

namespace kvs::gui {

struct WindowConfig {
    int width = 1280, height = 800;
    bool vsync = true;
    const char* ini_file = nullptr;  // ImGui's layout file; null: none written
};

class GlWindow {
  public:
    explicit GlWindow(const WindowConfig& cfg);
    ~GlWindow();
    GlWindow(const GlWindow&) = delete;
    GlWindow& operator=(const GlWindow&) = delete;

    GLFWwindow* handle() const { return win_; }
    bool should_close() const;
    void toggle_fullscreen();
    bool fullscreen() const { return fullscreen_; }
    void framebuffer_size(int& w, int& h) const;
    // The monitor's content scale (GLFW's: 2 on a display the system scales by 200%), 1 where
    // none is known.
    float content_scale() const;
    const std::string& gl_version() const { return gl_version_; }
    const std::string& gl_renderer() const { return gl_renderer_; }
    // The paths dropped on the window since the last call (GLFW's drop callback).
    std::vector<std::string> take_dropped() { return std::exchange(dropped_, {}); }

  private:
    GLFWwindow* win_ = nullptr;
    bool fullscreen_ = false;
    int saved_x_ = 0, saved_y_ = 0, saved_w_ = 0, saved_h_ = 0;
    std::string gl_version_, gl_renderer_;
    std::string ini_file_;
    std::vector<std::string> dropped_;
};

}  // namespace kvs::gui
