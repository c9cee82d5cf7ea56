#include "lessonlib/attention_row_words.h"

#include <cmath>
#include <cstdio>

#include "core/util/numbering.h"

namespace kvs {

std::string attention_number(float v) {
    if (std::isnan(v)) return "none";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return "0";  // -0 too: a score of 0 reads as 0
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", static_cast<double>(v));
    return b;
}

std::string attention_numbers(const float* v, std::size_t n) {
    std::string s = "[";
    for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + attention_number(v[i]);
    return s + "]";
}

const char* key_source_words(KvSource s, ReportLang lang) {
    const Words w{lang};
    switch (s) {
        case KvSource::Cached:
            return w(kv_source_name(s), "来自缓存");
        case KvSource::New:
            return w(kv_source_name(s), "本步新算");
        case KvSource::Recomputed:
            return w(kv_source_name(s), "重新计算");
    }
    return kv_source_name(s);
}

KeyCells key_cells(const AttentionExplain& e, int j, ReportLang lang) {
    KeyCells c;
    c.position = position_of_index(j);
    c.source = key_source_words(e.source[j], lang);
    c.raw = attention_number(e.raw[j]);
    c.scaled = attention_number(e.scaled[j]);
    c.weight = attention_number(e.weights[j]);
    c.masked = e.masked[j];
    return c;
}

}  // namespace kvs
