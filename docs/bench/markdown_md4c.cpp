// Parse time of every lesson file, the own parser (gui/views/markdown.cpp) against md4c (Debian's
// libmd4c-dev) with the features the lesson panel needs (tables; emphasis, code spans,
// headings, lists and fenced code are CommonMark), docs/decisions.md "Lesson Markdown".
// md4c is timed with callbacks that only count blocks and spans: the lower bound of an md4c
// parser, which would still have to build MdBlock/MdSpan from the callbacks.
// Build (from the repo root, after building kvscope_gui_views):
//   g++ -O2 -std=c++20 -I. docs/bench/markdown_md4c.cpp build/gui/views/libkvscope_gui_views.a
//       -lmd4c -o /tmp/markdown_bench
// Run: /tmp/markdown_bench lessons/*/*.md
#include <md4c.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gui/views/markdown.h"

namespace {
int blocks = 0, spans = 0;
int on_block(MD_BLOCKTYPE, void*, void*) {
    ++blocks;
    return 0;
}
int on_span(MD_SPANTYPE, void*, void*) {
    ++spans;
    return 0;
}
int on_leave_block(MD_BLOCKTYPE, void*, void*) {
    return 0;
}
int on_leave_span(MD_SPANTYPE, void*, void*) {
    return 0;
}
int on_text(MD_TEXTTYPE, const MD_CHAR*, MD_SIZE, void*) {
    return 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> texts;
    std::size_t bytes = 0;
    for (int i = 1; i < argc; ++i) {
        std::ifstream f(argv[i]);
        std::stringstream ss;
        ss << f.rdbuf();
        texts.push_back(ss.str());
        bytes += texts.back().size();
    }
    MD_PARSER p{};
    p.flags = MD_FLAG_TABLES;
    p.enter_block = on_block;
    p.leave_block = on_leave_block;
    p.enter_span = on_span;
    p.leave_span = on_leave_span;
    p.text = on_text;
    std::vector<double> own, md;
    std::size_t own_blocks = 0;
    for (int run = 0; run < 31; ++run) {  // interleaved, median of 31 runs each
        auto t0 = std::chrono::steady_clock::now();
        own_blocks = 0;
        for (const auto& t : texts) own_blocks += kvs::gui::parse_markdown(t).size();
        auto t1 = std::chrono::steady_clock::now();
        blocks = spans = 0;
        for (const auto& t : texts) md_parse(t.data(), static_cast<MD_SIZE>(t.size()), &p, nullptr);
        auto t2 = std::chrono::steady_clock::now();
        own.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        md.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    }
    std::printf(
        "%zu files, %zu bytes; own parser: %zu blocks, median %.0f us; md4c: %d blocks, %d "
        "spans, median %.0f us (31 runs each, interleaved)\n",
        texts.size(), bytes, own_blocks, median(own), blocks, spans, median(md));
}
