#include "gui/draw/font_check.h"

#include <stb_truetype.h>

#include <cstdint>
#include <cstring>
#include <map>

#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/utf8.h"

namespace kvs::gui {
namespace {

constexpr std::size_t kMaxFontBytes = std::size_t(64) << 20;  // wqy-microhei.ttc is 5 MiB

// Big-endian reads; the caller has checked that the bytes are there.
std::uint32_t u16(const unsigned char* p) {
    return (std::uint32_t(p[0]) << 8) | p[1];
}
std::uint32_t u32(const unsigned char* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
           p[3];
}

struct Table {
    std::uint32_t offset = 0, length = 0;
};

// Checks the font whose table directory starts at `start`; fills `tables` (tag -> record).
std::string directory(const unsigned char* d, std::size_t size, std::size_t start,
                      std::map<std::string, Table>& tables) {
    if (start > size || size - start < 12) return "the table directory is cut short";
    const std::uint32_t version = u32(d + start);
    if (version != 0x00010000 && version != 0x74727565 /* true */ &&
        version != 0x4F54544F /* OTTO */)
        return "not a TrueType or OpenType font (no font header)";
    const std::size_t n = u16(d + start + 4);
    if (n == 0) return "the font has no tables";
    if ((size - start - 12) / 16 < n) return "the table directory is cut short";
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char* r = d + start + 12 + 16 * i;
        Table t{u32(r + 8), u32(r + 12)};
        if (std::uint64_t(t.offset) + t.length > size)
            // The tag is 4 bytes of the file: escaped, so the message stays one line.
            return "table '" + escape_for_one_line({reinterpret_cast<const char*>(r), 4}) +
                   "' lies beyond the end of the file (truncated?)";
        tables.emplace(std::string(reinterpret_cast<const char*>(r), 4), t);
    }
    return "";
}

// The parts of the tables stb_truetype reads without a length to check against.
std::string tables_in_range(const unsigned char* d, const std::map<std::string, Table>& t) {
    for (const char* need : {"cmap", "head", "hhea", "hmtx", "maxp"})
        if (!t.count(need)) return std::string("the '") + need + "' table is missing";
    const Table head = t.at("head"), hhea = t.at("hhea"), maxp = t.at("maxp"), hmtx = t.at("hmtx"),
                cmap = t.at("cmap");
    if (head.length < 54 || hhea.length < 36 || maxp.length < 6 || cmap.length < 4)
        return "a 'head', 'hhea', 'maxp' or 'cmap' table is too short";
    const std::uint32_t glyphs = u16(d + maxp.offset + 4);
    const std::uint32_t metrics = u16(d + hhea.offset + 34);
    if (glyphs == 0) return "the font has no glyphs";
    if (metrics == 0 || metrics > glyphs || hmtx.length < 4 * metrics + 2 * (glyphs - metrics))
        return "the 'hmtx' table does not cover the glyphs";
    // Every character-map subtable, its header and its own length inside 'cmap'.
    const std::uint32_t subtables = u16(d + cmap.offset + 2);
    if ((cmap.length - 4) / 8 < subtables) return "the 'cmap' table is cut short";
    for (std::uint32_t i = 0; i < subtables; ++i) {
        const std::uint32_t off = u32(d + cmap.offset + 4 + 8 * i + 4);
        if (off > cmap.length || cmap.length - off < 8) return "a 'cmap' subtable is out of range";
        const unsigned char* s = d + cmap.offset + off;
        const std::uint32_t format = u16(s);
        const std::uint32_t len = format >= 8 ? u32(s + 4) : u16(s + 2);
        if (len < 8 || len > cmap.length - off) return "a 'cmap' subtable is out of range";
    }
    if (t.count("glyf")) {
        if (!t.count("loca")) return "the 'loca' table is missing";
        const Table loca = t.at("loca"), glyf = t.at("glyf");
        const bool long_offsets = u16(d + head.offset + 50) != 0;
        const std::uint64_t entry = long_offsets ? 4 : 2;
        if (loca.length < entry * (glyphs + 1)) return "the 'loca' table does not cover the glyphs";
        std::uint64_t prev = 0;
        for (std::uint32_t g = 0; g <= glyphs; ++g) {
            const unsigned char* p = d + loca.offset + entry * g;
            const std::uint64_t at = long_offsets ? u32(p) : std::uint64_t(u16(p)) * 2;
            if (at < prev || at > glyf.length) return "a glyph lies outside the 'glyf' table";
            prev = at;
        }
    } else {
        // stb_truetype reads CFF outlines as if the table were 512 MiB long: not checkable here.
        return t.count("CFF ") ? "OpenType fonts with CFF outlines are not supported (use a .ttf)"
                               : "the font has no 'glyf' outlines";
    }
    return "";
}

}  // namespace

std::string font_problem(const unsigned char* data, std::size_t size) {
    if (size == 0) return "the file is empty";
    if (size < 12) return "too short to be a font (" + std::to_string(size) + " bytes)";
    if (size > kMaxFontBytes) return "larger than 64 MiB";
    std::size_t start = 0;
    if (u32(data) == 0x74746366 /* ttcf */) {
        const std::uint32_t fonts = u32(data + 8);
        if (fonts == 0 || (size - 12) / 4 < fonts) return "the font collection header is cut short";
        start = u32(data + 12);  // ImGui loads font 0 of a collection
    }
    std::map<std::string, Table> tables;
    std::string why = directory(data, size, start, tables);
    if (why.empty()) why = tables_in_range(data, tables);
    if (!why.empty()) return why;
    // stb_truetype's own checks, on the same bytes.
    const int offset = stbtt_GetFontOffsetForIndex(data, 0);
    stbtt_fontinfo info;
    if (offset < 0 || static_cast<std::size_t>(offset) != start ||
        !stbtt_InitFont(&info, data, offset))
        return "stb_truetype cannot read it";
    return "";
}

FontBytes read_font(const std::string& path) {
    FontBytes f;
    try {
        f.bytes = read_file_bytes(path, kMaxFontBytes);
    } catch (const Error& e) {
        f.problem = e.what();
        return f;
    }
    const std::string why = font_problem(f.bytes.data(), f.bytes.size());
    if (!why.empty()) {
        f.problem = path + ": " + why;
        f.bytes.clear();
    }
    return f;
}

}  // namespace kvs::gui
