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
    }
    return "on";
}

std::optional<CacheView> parse_cache_view(std::string_view s) {
    for (CacheView c : {CacheView::On, CacheView::Off, CacheView::Compare})
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
    }
    return {CacheMode::Cached};
}

}  // namespace kvs
