#pragma once
// Key presses as GLFW delivers them, queued until the next frame reads them. ImGui 1.86 keeps
// only whether a key is down at frame time, so a press and release that arrive together (a quick
// tap, a key sent by a tool, a slow frame) would be lost; the queue keeps every one.
#include <vector>

struct GLFWwindow;

namespace kvs::gui {

struct KeyPress {
    int key;   // GLFW_KEY_*
    int mods;  // GLFW_MOD_* bits
};

// Install before ImGui's GLFW backend: ImGui chains to this callback, so it sees every key too.
void install_key_queue(GLFWwindow* window);
// The presses (and auto-repeats) since the last call.
std::vector<KeyPress> take_key_presses();

}  // namespace kvs::gui
