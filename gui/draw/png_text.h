#pragma once
// kvscope's PNG screenshots carry a PNG text chunk, Software = "kvscope", right after the image
// header: an earlier screenshot is known by it and replaced, any other PNG (the user's) is kept.
#include <string>

#include "core/util/output_file.h"

namespace kvs::gui {

// `png` (a whole PNG from the encoder) with the chunk inserted after IHDR.
std::string with_kvscope_text(std::string png);

// The screenshot as an output file: the PNG signature, an IHDR chunk, then that text chunk.
OutputKind screenshot_output();

// A JPEG screenshot carries a comment segment "kvscope" right after its start marker, for the same
// reason; `jpeg` from the encoder with it inserted, and the output kind known by it.
std::string with_kvscope_comment(std::string jpeg);
OutputKind jpeg_screenshot_output();

}  // namespace kvs::gui
