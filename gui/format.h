#pragma once
// Text-field helpers of the window. Numbers and token pieces are formatted by core/format.h.
#include <cstddef>
#include <string>

#include "core/format.h"

namespace kvs::gui {

// Copies `s` into a text field's buffer of `size` bytes, NUL-terminated; a text too long is cut
// at a UTF-8 character boundary, never inside a character.
void copy_to_buffer(char* buf, std::size_t size, const std::string& s);

}  // namespace kvs::gui
