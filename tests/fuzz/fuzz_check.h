#pragma once
// What the fuzz targets share: a check that turns a broken invariant into a crash libFuzzer
// reports (and keeps the input of), and a llama2.c tokenizer built in memory.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define FUZZ_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                 \
        }                                                                                 \
    } while (0)

namespace kvs::fuzz {

// Bytes of a llama2.c tokenizer of exactly `vocab` entries (vocab >= 3): <unk>, <s>, </s>, the
// 256 "<0xXX>" byte pieces as far as they fit, then `pieces` (earlier ones score higher, so they
// merge first), then padding.
inline std::vector<unsigned char> tokenizer_bytes(int vocab,
                                                  const std::vector<std::string>& pieces) {
    std::vector<std::string> v = {"<unk>", "\n<s>\n", "\n</s>\n"};
    for (int b = 0; b < 256 && static_cast<int>(v.size()) < vocab; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        v.push_back(buf);
    }
    for (const auto& p : pieces)
        if (static_cast<int>(v.size()) < vocab) v.push_back(p);
    while (static_cast<int>(v.size()) < vocab) v.push_back("<pad" + std::to_string(v.size()) + ">");
    std::vector<unsigned char> out;
    auto put = [&out](const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        out.insert(out.end(), b, b + n);
    };
    std::int32_t max_len = 0;
    for (const auto& s : v)
        max_len = std::max<std::int32_t>(max_len, static_cast<std::int32_t>(s.size()));
    put(&max_len, 4);
    for (std::size_t i = 0; i < v.size(); ++i) {
        const bool merged = i >= 259 && i < 259 + pieces.size();
        const float score = merged ? -static_cast<float>(i - 259) : (i >= 259 ? -1e6f : 0.0f);
        const auto len = static_cast<std::int32_t>(v[i].size());
        put(&score, 4);
        put(&len, 4);
        put(v[i].data(), v[i].size());
    }
    return out;
}

}  // namespace kvs::fuzz
