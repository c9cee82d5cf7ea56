#include "gui/app/gl_window.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/html5.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/util/error.h"
#include "gui/app/key_queue.h"

namespace kvs::gui {
namespace {

std::string g_glfw_error;
void on_glfw_error(int, const char* what) {
    g_glfw_error = what ? what : "unknown GLFW error";
}

const char* kUseCli = "kvscope-cli runs the same engine in a terminal";

// "4.5 (Core Profile) Mesa 22.3.6" -> 4, 5; "OpenGL ES 3.0 (WebGL 2.0)" -> 3, 0
bool parse_gl_version(const char* v, int& major, int& minor) {
    if (v && std::strncmp(v, "OpenGL ES ", 10) == 0) v += 10;
    return v && std::sscanf(v, "%d.%d", &major, &minor) == 2;
}

}  // namespace

GlWindow::GlWindow(const WindowConfig& cfg) {
#ifndef __EMSCRIPTEN__  // the page draws on its canvas
    const char* x11 = std::getenv("DISPLAY");
    const char* wl = std::getenv("WAYLAND_DISPLAY");
    if ((!x11 || !*x11) && (!wl || !*wl))
        throw Error(std::string("no display (DISPLAY and WAYLAND_DISPLAY are unset), so no window "
                                "can open; ") +
                    kUseCli + " (kvscope-cli --help), or run under xvfb-run");
#endif
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) throw Error("cannot open a window (" + g_glfw_error + "); " + kUseCli);

#ifdef __EMSCRIPTEN__
    // The page: WebGL2, which is OpenGL ES 3.0 (web/CMakeLists.txt links Emscripten's GLFW).
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    const int need_major = 3, need_minor = 0;
    const char* glsl = "#version 300 es";
    const char* need = "WebGL2";
#else
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    const int need_major = 3, need_minor = 3;
    const char* glsl = "#version 330 core";
    const char* need = "OpenGL 3.3";
#endif
    win_ = glfwCreateWindow(cfg.width, cfg.height, "kvscope", nullptr, nullptr);
    if (!win_) {
        const std::string why = g_glfw_error;
        // Was it the version? Ask for any context and see what the driver offers.
        glfwDefaultWindowHints();
        glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
        GLFWwindow* probe = glfwCreateWindow(64, 64, "kvscope probe", nullptr, nullptr);
        std::string offered;
        if (probe) {
            glfwMakeContextCurrent(probe);
            const char* v = reinterpret_cast<const char*>(glGetString(GL_VERSION));
            offered = v ? v : "";
            glfwDestroyWindow(probe);
        }
        glfwTerminate();
        if (!offered.empty())
            throw Error("kvscope needs OpenGL 3.3; this display offers OpenGL " + offered + "; " +
                        kUseCli);
        throw Error("cannot create an OpenGL 3.3 window (" + why + "); " + kUseCli);
    }
    glfwMakeContextCurrent(win_);
    const char* v = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    gl_version_ = v ? v : "";
    gl_renderer_ = r ? r : "";
    int major = 0, minor = 0;
    if (!parse_gl_version(v, major, minor) || major * 10 + minor < need_major * 10 + need_minor) {
        glfwDestroyWindow(win_);
        glfwTerminate();
        throw Error(std::string("kvscope needs ") + need + "; this display offers OpenGL " +
                    gl_version_ + "; " + kUseCli);
    }
    glfwSwapInterval(cfg.vsync ? 1 : 0);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    if (cfg.ini_file) ini_file_ = cfg.ini_file;
    io.IniFilename = ini_file_.empty() ? nullptr : ini_file_.c_str();
    // Files and folders dropped on the window: the main loop opens the model among them. (In the
    // page, index.html takes drops itself and writes them into the page's file system.)
#ifndef __EMSCRIPTEN__
    glfwSetWindowUserPointer(win_, this);
    glfwSetDropCallback(win_, [](GLFWwindow* w, int n, const char** paths) {
        auto* self = static_cast<GlWindow*>(glfwGetWindowUserPointer(w));
        if (self && n > 0 && paths) self->dropped_.assign(paths, paths + n);
    });
#endif
    install_key_queue(win_);  // first: ImGui's backend chains to it
    ImGui_ImplGlfw_InitForOpenGL(win_, true);
    ImGui_ImplOpenGL3_Init(glsl);
}

GlWindow::~GlWindow() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(win_);
    glfwTerminate();
}

bool GlWindow::should_close() const {
    return glfwWindowShouldClose(win_);
}

void GlWindow::framebuffer_size(int& w, int& h) const {
    glfwGetFramebufferSize(win_, &w, &h);
}

void GlWindow::toggle_fullscreen() {
#ifdef __EMSCRIPTEN__
    // The page: the browser's full screen for the canvas (Emscripten's GLFW has no monitors to
    // switch to); the request waits for the key's event handler, as browsers require.
    if (!fullscreen_) {
        const EMSCRIPTEN_RESULT r = emscripten_request_fullscreen("#canvas", true);
        fullscreen_ = r == EMSCRIPTEN_RESULT_SUCCESS || r == EMSCRIPTEN_RESULT_DEFERRED;
    } else {
        emscripten_exit_fullscreen();
        fullscreen_ = false;
    }
    return;
#endif
    if (!fullscreen_) {
        GLFWmonitor* mon = glfwGetPrimaryMonitor();
        const GLFWvidmode* mode = mon ? glfwGetVideoMode(mon) : nullptr;
        if (!mode) return;
        glfwGetWindowPos(win_, &saved_x_, &saved_y_);
        glfwGetWindowSize(win_, &saved_w_, &saved_h_);
        glfwSetWindowMonitor(win_, mon, 0, 0, mode->width, mode->height, mode->refreshRate);
        fullscreen_ = true;
    } else {
        glfwSetWindowMonitor(win_, nullptr, saved_x_, saved_y_, saved_w_, saved_h_, 0);
        fullscreen_ = false;
    }
}

float GlWindow::content_scale() const {
#ifdef __EMSCRIPTEN__
    return 1.0f;  // the page follows the browser's zoom itself
#else
    float x = 1, y = 1;
    glfwGetWindowContentScale(win_, &x, &y);
    return y > 0 && y < 16 ? y : 1.0f;
#endif
}

}  // namespace kvs::gui
