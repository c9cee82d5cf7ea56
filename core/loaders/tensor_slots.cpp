#include "core/loaders/tensor_slots.h"

#include <algorithm>

#include "core/loaders/rotate_half.h"

namespace kvs {
namespace {

TensorSlot slot_of(const ArchTable& t, const TensorRow& r, int layer, const ModelConfig& c,
                   FileFormat format, const LlamaWeights* w) {
    TensorSlot s;
    s.row = &r;
    s.layer = layer;
    const std::string at = layer < 0 ? "" : std::to_string(layer) + ".";
    s.name = format == FileFormat::gguf ? (layer < 0 ? "" : "blk." + at) + r.gguf
                                        : (layer < 0 ? "" : t.hf_layer + at) + r.hf;
    s.rows = side_length(r.out, c);
    s.n = side_length(r.in, c);
    if (r.in == Side::one)
        s.dims = {s.rows};
    else if (format == FileFormat::gguf || r.conv1d())
        s.dims = {s.n, s.rows};
    else
        s.dims = {s.rows, s.n};
    s.conv1d = format == FileFormat::hf && r.conv1d();
    s.rope_rows = r.rope_rows() && (format == FileFormat::hf || t.gguf_rope_rows);
    if (w) {
        const std::uint64_t part = s.elements() / r.fills.size();
        for (WeightView v : r.fills)  // a view left null (kept compact) stays null
            s.to.push_back(w->*v ? w->*v + std::uint64_t(layer < 0 ? 0 : layer) * part : nullptr);
    }
    return s;
}

}  // namespace

std::vector<TensorSlot> tensor_slots(const ArchTable& t, const ModelConfig& c, FileFormat format,
                                     const LlamaWeights* w) {
    std::vector<TensorSlot> slots;
    const auto rows = t.tensors;
    for (std::size_t i = 0; i < rows.size();) {
        if (!rows[i].per_layer) {
            if (!(rows[i].classifier() && c.shared_classifier))
                slots.push_back(slot_of(t, rows[i], -1, c, format, w));
            ++i;
            continue;
        }
        std::size_t end = i;  // a run of per-layer kinds
        while (end < rows.size() && rows[end].per_layer) ++end;
        for (int l = 0; l < c.n_layers; ++l)
            for (std::size_t k = i; k < end; ++k)
                slots.push_back(slot_of(t, rows[k], l, c, format, w));
        i = end;
    }
    return slots;
}

namespace {

// [rows, cols] row-major at `in` as [cols, rows] at `out`, in 64 x 64 tiles so that both sides
// stay in cache.
void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
    constexpr std::size_t kTile = 64;
    for (std::size_t r0 = 0; r0 < rows; r0 += kTile)
        for (std::size_t c0 = 0; c0 < cols; c0 += kTile)
            for (std::size_t r = r0; r < std::min(rows, r0 + kTile); ++r)
                for (std::size_t c = c0; c < std::min(cols, c0 + kTile); ++c)
                    out[c * rows + r] = in[r * cols + c];
}

}  // namespace

void reorder_values(const TensorSlot& s, const float* from, float* to, std::size_t head_dim,
                    bool to_file) {
    const std::size_t rows = s.rows, n = s.n;
    if (s.rope_rows)
        copy_rotate_half_rows(from, to, rows, n * sizeof(float), head_dim, !to_file);
    else if (s.conv1d && to_file)  // our [out, in] to the file's [in, out]
        transpose(from, rows, n, to);
    else if (s.conv1d)
        transpose(from, n, rows, to);
    else
        std::copy_n(from, rows * n, to);
}

}  // namespace kvs
