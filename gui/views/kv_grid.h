#pragma once
// The KV cache as the trace recorded it: column p holds the K and V rows of token p, taken from
// the step that wrote them (StepRecord::kv_rows, [n_layers, 2, rows, kv_dim]). The grid after
// step s has one column per token in the cache; nothing here recomputes a value. A cache read
// whole from its slot (lesson 8's batch, lessonlib/batch_sweep.h) is the same grid with every
// column from one block of rows.
#include <cstdint>
#include <span>
#include <vector>

#include "core/session/trace.h"
#include "gui/views/colormap.h"

namespace kvs::gui {

struct KvColumnRef {
    const float* rows = nullptr;  // the block holding the column: [n_layers, 2, kept, kv_dim]
    int kept = 0;                 // rows in that block; null rows: the step's payload was dropped
    int row = 0;                  // row inside the block
};

struct KvGridColumns {
    int n = 0;  // tokens in the cache after step s (columns)
    int n_layers = 0;
    int kv_dim = 0;  // n_kv_heads * head_dim: values per token per layer, for K and again for V
    int head_dim = 0;
    std::vector<KvColumnRef> cols;  // [n]
    // Columns the step wrote: one in cached decode, every one when the cache was rebuilt.
    int written_begin = 0, written_end = 0;
    int query_pos = -1;  // position of the step's last query, which reads columns 0..query_pos
};

KvGridColumns collect_kv_columns(std::span<const StepRecord> steps, int s);
// The same grid without its columns (cols empty): its size and what step s wrote and read, from
// step s alone, for a frame whose texture already holds every column (kv_texels_current).
KvGridColumns kv_grid_shape(std::span<const StepRecord> steps, int s);
// A cache of shape `kv` whose rows 0..kv.len-1 are `rows` ([n_layers, 2, kv.len, kv_dim], kept
// alive by the caller); columns written_begin..written_end-1 were written last, and the last
// query read up to query_pos (-1: none).
KvGridColumns kv_columns_of_cache(const KvShape& kv, std::span<const float> rows, int written_begin,
                                  int written_end, int query_pos);

// K (kv = 0) or V (kv = 1) value of token `pos`, channel `ch`; NaN when not in the trace (or
// the grid holds no columns).
float kv_value(const KvGridColumns& g, int layer, int kv, int pos, int ch);
// Largest |value| of one layer over the columns present (0 when none): the colour scale.
float kv_abs_max(const KvGridColumns& g, int layer);
// The |value| drawn at full colour for one layer: 2.5 x the RMS of the values present (at most
// their largest |value|), so a few large channels do not wash the rest out. 1 when empty.
float kv_colour_scale(const KvGridColumns& g, int layer);
// One column of one layer, top to bottom: K channels 0..kv_dim-1, then V channels.
void kv_column_pixels(const KvGridColumns& g, int layer, int pos, float scale, Rgba missing,
                      Rgba* out);
// Positions [p0, p1) folded into one column (2 x kv_dim pixels): each channel drawn as its value
// of largest |value| there (a spike stays visible at any length), `missing` where none of them
// is in the trace. p1 = p0 + 1: exactly kv_column_pixels.
void kv_block_pixels(const KvGridColumns& g, int layer, int p0, int p1, float scale, Rgba missing,
                     Rgba* out);

// One layer's grid as texels, kept between frames and extended by the columns that came since.
// Past kMaxColumns tokens a texel column holds a block of `stride` positions (a power of two,
// kv_block_pixels), so the texture is at most kMaxColumns wide whatever the context (32,768 tokens
// are 1,024 columns of 32; llvmpipe's largest texture is 16,384 wide). `key` names what the
// columns mean: columns of one key never change once written, so only the texel columns whose
// positions came or went are redone; another key, height or stride starts over.
struct KvTexels {
    static constexpr int kMaxColumns = 1024;
    std::uint64_t key = 0;
    int stride = 1;   // positions per texel column
    int cap = 0;      // texel columns held: a power of two, at most kMaxColumns
    int height = 0;   // 2 x kv_dim
    int cols = 0;     // positions drawn
    float scale = 1;  // |value| drawn at full colour: one per key, from the values present then
    std::vector<Rgba> px;  // [cap, height]: texel column t at px[t * height]
};
// Positions per texel column for a grid of n tokens: 1 up to kMaxColumns, then the power of two
// that keeps it within kMaxColumns columns.
int kv_texel_stride(int n);
struct KvTexelChange {
    bool restarted = false;   // every texel column was redone (the texture is made again)
    int first = 0, last = 0;  // texel columns [first, last) that changed
};
// Whether `t` already holds grid `g` (its size, with columns or without) under `key`: then
// update_kv_texels would change nothing and the columns need not be collected.
bool kv_texels_current(const KvTexels& t, const KvGridColumns& g, std::uint64_t key);
KvTexelChange update_kv_texels(KvTexels& t, const KvGridColumns& g, int layer, Rgba missing,
                               std::uint64_t key);

}  // namespace kvs::gui
