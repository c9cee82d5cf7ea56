// The stb functions the window uses (Debian's libstb is a native library; the page compiles the
// same headers here): stb_truetype for the font check, stb_image_write for screenshots.
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
