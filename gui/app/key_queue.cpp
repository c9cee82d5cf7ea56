#include "gui/app/key_queue.h"

#include <GLFW/glfw3.h>

namespace kvs::gui {
namespace {

// GLFW calls back on the thread that polls events, the same one that draws frames.
std::vector<KeyPress> g_presses;

void on_key(GLFWwindow*, int key, int, int action, int mods) {
    if (action == GLFW_PRESS || action == GLFW_REPEAT) g_presses.push_back({key, mods});
}

}  // namespace

void install_key_queue(GLFWwindow* window) {
    glfwSetKeyCallback(window, on_key);
}

std::vector<KeyPress> take_key_presses() {
    std::vector<KeyPress> out;
    out.swap(g_presses);
    return out;
}

}  // namespace kvs::gui
