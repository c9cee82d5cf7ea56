#!/usr/bin/env python3
"""The characters the page needs from the Chinese font (scripts/web.sh cuts the font to them with
pyftsubset): what the desktop window merges from it (gui/draw/fonts.cpp), i.e. Dear ImGui's
GetGlyphRangesChineseSimplifiedCommon() -- read from the same imgui_draw.cpp the page compiles --
plus every character of the window's strings and lessons (App::glyph_text). The strings are taken
as every non-ASCII character of the sources that hold them (a superset of their Chinese text:
comments and English add a few glyphs, none is missed).
  cjk_glyphs.py IMGUI_DRAW_CPP ROOT > unicodes.txt   (one U+XXXX a line, sorted)"""
import os
import re
import sys


def imgui_common_chinese(path):
    src = open(path, encoding="utf-8").read()
    body = src[src.index("ImFontAtlas::GetGlyphRangesChineseSimplifiedCommon()"):]
    offsets = body[body.index("accumulative_offsets_from_0x4E00[] ="):]
    offsets = offsets[offsets.index("{") + 1:offsets.index("}")]
    base = body[body.index("base_ranges[]"):]
    base = base[base.index("{") + 1:base.index("}")]
    out = set()
    pairs = [int(x, 16) for x in re.findall(r"0x[0-9A-Fa-f]+", base)]
    for lo, hi in zip(pairs[0::2], pairs[1::2]):
        out.update(range(lo, hi + 1))
    c = 0x4E00
    for n in (int(x) for x in re.findall(r"\d+", offsets)):
        c += n
        out.add(c)
    if len(out) < 2500:
        sys.exit(f"cjk_glyphs.py: read only {len(out)} characters from {path}")
    return out


def text_chars(root):
    out = set()
    folders = ["gui", "core", "lessonlib", "cmdline", "lessons"]
    for folder in folders:
        for d, _, files in os.walk(os.path.join(root, folder)):
            for f in files:
                if folder == "lessons" or f.endswith((".cpp", ".h")):
                    text = open(os.path.join(d, f), encoding="utf-8", errors="ignore").read()
                    out.update(ord(ch) for ch in text if ord(ch) > 0x7F)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cjk_glyphs.py IMGUI_DRAW_CPP ROOT")
    chars = imgui_common_chinese(sys.argv[1]) | text_chars(sys.argv[2])
    sys.stdout.write("".join(f"U+{c:04X}\n" for c in sorted(chars)))


if __name__ == "__main__":
    main()
