#pragma once
// The KV cache panel (gui/panel_kv_cache.cpp) and what it keeps between frames.
#include "gui/panels.h"

namespace kvs::gui {

struct KvCachePanel {
    // The layer shown, here and in lesson 8's batch of KV caches; -1: the attention panel's
    // (settings.layer).
    int layer = -1;
};

void draw_kv_cache(FrameContext& f, KvCachePanel& panel);

}  // namespace kvs::gui
