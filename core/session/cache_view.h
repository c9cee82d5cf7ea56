#pragma once
// What the user asked to see about the KV cache: generation with it (on), without it (off), or
// both side by side (compare). One enum for the lessons' @cache, the window's toolbar and
// settings, and the command lines; its words are written and read here only.
#include <optional>
#include <string_view>
#include <vector>

#include "core/session/trace.h"

namespace kvs {

enum class CacheView { On, Off, Compare };

const char* cache_view_name(CacheView c);  // "on", "off", "compare"
// The view a word names; nullopt for any other text (callers say what they accept).
std::optional<CacheView> parse_cache_view(std::string_view s);
// The sessions a view runs, in order: on {Cached}, off {Uncached}, compare {Cached, Uncached}.
std::vector<CacheMode> modes_for(CacheView c);

}  // namespace kvs
