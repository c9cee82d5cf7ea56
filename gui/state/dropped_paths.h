#pragma once
// What the window opens when files or folders are dropped on it (GLFW's drop callback, in
// gui/app/gl_window.cpp): the model among them. A llama2.c checkpoint's tokenizer dropped with it
// is found beside it by the loader, so it is skipped here; a Hugging Face folder or a GGUF file is
// the model itself.
#include <string>
#include <vector>

namespace kvs::gui {

// The first path that is a folder or whose file name does not start with "tok"; the first path
// when all do (opening it then says what is wrong); "" for none.
std::string model_among_dropped(const std::vector<std::string>& paths);

}  // namespace kvs::gui
