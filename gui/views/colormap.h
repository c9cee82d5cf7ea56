#pragma once
// Colours of the heatmaps, as plain RGBA bytes so tests can check pixels without a GPU.
// Attention weights use a sequential map (dark purple at 0 to pale yellow at 1) that never
// produces a grey; masked cells use a flat grey, so "above the diagonal" is one exact colour.
#include <cstdint>

namespace kvs::gui {

struct Rgba {
    std::uint8_t r = 0, g = 0, b = 0, a = 255;
    bool operator==(const Rgba&) const = default;
};

// How weights in [0, 1] are stretched before colouring: at 512 tokens most weights are tiny,
// and a square root (or log) makes the structure visible.
enum class WeightScale { Linear, Sqrt, Log };
const char* weight_scale_name(WeightScale s);
// The scaled position in [0, 1] of weight w (log: 1e-4 and below map to 0).
float scale_weight(float w, WeightScale s);

struct HeatmapPalette {
    Rgba mask;        // causally masked: the query may not see this key
    Rgba missing;     // row not in the trace any more (payload dropped for memory)
    Rgba empty_row;   // a row with no key to attend to (the toy's "none")
    Rgba highlight;   // outline of the rows/columns computed at this step
    Rgba read;        // marks the cache rows the current query reads
    Rgba recomputed;  // outline of rows recomputed without the cache; K/V rows recomputed
    WeightScale scale = WeightScale::Sqrt;
};
HeatmapPalette palette_for(bool dark_theme, WeightScale scale);

// Sequential map for t in [0, 1] (clamped).
Rgba sequential_colour(float t);
Rgba weight_colour(float w, WeightScale s);
// Diverging map for signed values: v / scale in [-1, 1] goes blue, through a light neutral, to
// red (clamped).
Rgba signed_colour(float v, float scale);
// Black or white, whichever reads on `bg` (numbers drawn in a coloured cell).
Rgba ink_on(Rgba bg);

}  // namespace kvs::gui
