#include "core/util/text_file.h"

#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/utf8.h"

namespace kvs {

std::string_view without_bom(std::string_view text) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    return text;
}

std::string_view utf8_text(std::string_view text, const std::string& name) {
    const auto starts = [&](std::string_view bom) { return text.starts_with(bom); };
    using namespace std::string_view_literals;
    const char* enc = starts("\xFF\xFE\0\0"sv) || starts("\0\0\xFE\xFF"sv) ? "UTF-32"
                      : starts("\xFF\xFE"sv) || starts("\xFE\xFF"sv)       ? "UTF-16"
                                                                           : nullptr;
    if (enc)
        throw Error(name + ": " + enc + " text (it starts with a " + enc +
                    " byte order mark); kvscope reads UTF-8: save it as UTF-8");
    return without_bom(text);
}

std::string read_text_file(const std::string& path, std::size_t limit) {
    const auto bytes = read_file_bytes(path, limit);
    return std::string(utf8_text(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path));
}

std::size_t first_bad_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_sequence_length(text, i);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

}  // namespace kvs
