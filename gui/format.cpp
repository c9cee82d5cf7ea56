#include "gui/format.h"

#include <algorithm>

namespace kvs::gui {

void copy_to_buffer(char* buf, std::size_t size, const std::string& s) {
    if (size == 0) return;
    std::size_t n = std::min(s.size(), size - 1);
    // Back off continuation bytes, then the lead byte of the character they belong to.
    if (n < s.size())
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    s.copy(buf, n);
    buf[n] = '\0';
}

}  // namespace kvs::gui
