#pragma once
// What the user asked to see about the KV cache: generation with it (on), without it (off),
// both side by side (compare), or why a cache is possible at all (bidirectional: the same model
// with and without the causal mask side by side, both recomputing every token, each measuring
// how far the earlier tokens' K/V rows move when one token is appended). One enum for the
// lessons' @cache, the window's toolbar and settings, and the command lines; its words are
// written and read here only.
#include <optional>
#include <string_view>
#include <vector>

#include "core/session/trace.h"

namespace kvs {

enum class CacheView { On, Off, Compare, Bidirectional };

const char* cache_view_name(CacheView c);  // "on", "off", "compare", "bidirectional"
// The view a word names; nullopt for any other text (callers say what they accept).
std::optional<CacheView> parse_cache_view(std::string_view s);
// The sessions a view runs, in order: on {Cached}, off {Uncached}, compare {Cached, Uncached},
// bidirectional {Uncached, Uncached}; and their masks (the second bidirectional in that view).
std::vector<CacheMode> modes_for(CacheView c);
std::vector<AttentionMask> masks_for(CacheView c);

}  // namespace kvs
