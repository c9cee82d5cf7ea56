#include "core/session/cache_view.h"

namespace kvs {

const char* cache_view_name(CacheView c) {
    switch (c) {
        case CacheView::On:
            return "on";
        case CacheView::Off:
            return "off";
        case CacheView::Compare:
            return "compare";
        case CacheView::Bidirectional:
            return "bidirectional";
    }
    return "on";
}

std::optional<CacheView> parse_cache_view(std::string_view s) {
    for (CacheView c :
         {CacheView::On, CacheView::Off, CacheView::Compare, CacheView::Bidirectional})
        if (s == cache_view_name(c)) return c;
    return std::nullopt;
}

std::vector<CacheMode> modes_for(CacheView c) {
    switch (c) {
        case CacheView::On:
            return {CacheMode::Cached};
        case CacheView::Off:
            return {CacheMode::Uncached};
        case CacheView::Compare:
            return {CacheMode::Cached, CacheMode::Uncached};
        case CacheView::Bidirectional:
            return {CacheMode::Uncached, CacheMode::Uncached};
    }
    return {CacheMode::Cached};
}

std::vector<AttentionMask> masks_for(CacheView c) {
    std::vector<AttentionMask> out(modes_for(c).size(), AttentionMask::Causal);
    if (c == CacheView::Bidirectional) out.back() = AttentionMask::Bidirectional;
    return out;
}

}  // namespace kvs
