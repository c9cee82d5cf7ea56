// The pipeline's second half: a file's tensors checked against the architecture's table, then
// copied into float32 (or kept compact) in llama2.c's order (core/loaders/load_pipeline.h).
#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "core/files/mapped_file.h"
#include "core/loaders/load_pipeline.h"
#include "core/loaders/rotate_half.h"

namespace kvs {
namespace {

std::string dims_text(const std::vector<std::uint64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

// The file's name of a slot: HF saves may prefix every name but the classifier's.
std::string file_name(const TensorSlot& s, const std::string& prefix) {
    return s.row->classifier() ? s.name : prefix + s.name;
}

// Tensors a file may hold beside the table's: the ones this architecture ignores or reads itself.
bool ignored(const ArchTable& t, const ModelConfig& c, const TensorLoad& in,
             const std::string& prefix, const std::string& n) {
    if (in.format == FileFormat::gguf) return t.gguf_side_tensor && n == t.gguf_side_tensor;
    const std::size_t sl = t.hf_ignored_suffix ? std::strlen(t.hf_ignored_suffix) : 0;
    if (sl && n.size() > sl && n.compare(n.size() - sl, sl, t.hf_ignored_suffix) == 0) return true;
    for (const TensorRow& r : t.tensors)
        if (r.classifier() && c.shared_classifier && n == r.hf) return true;
    for (int l = 0; l < c.n_layers; ++l)
        for (const char* b : t.hf_ignored_per_layer)
            if (n == prefix + t.hf_layer + std::to_string(l) + "." + b) return true;
    return false;
}

// Each slot's tensor, checked by name and shape; then no tensor the table does not know.
std::vector<const FileTensor*> match(const ArchTable& t, const ModelConfig& c, const TensorLoad& in,
                                     const std::vector<TensorSlot>& slots,
                                     std::map<std::string, int>& type_counts, const Refuse& fail) {
    std::map<std::string_view, const FileTensor*> by_name;
    for (const FileTensor& f : *in.files) by_name.emplace(f.name, &f);
    std::string prefix;
    if (in.format == FileFormat::hf && *t.hf_prefix &&
        by_name.count(t.hf_prefix + std::string(t.tensors[0].hf)))
        prefix = t.hf_prefix;
    std::vector<const FileTensor*> found;
    std::set<std::string_view> used;
    for (const TensorSlot& s : slots) {
        const std::string n = file_name(s, prefix);
        const auto it = by_name.find(n);
        if (it == by_name.end()) fail("no tensor '" + n + "'");
        if (it->second->dims != s.dims)
            fail("tensor '" + n + "' is " + dims_text(it->second->dims) + ", the shapes (" +
                 c.describe() + ") need " + dims_text(s.dims));
        used.insert(it->second->name);
        ++type_counts[ggml_type_name(it->second->type)];
        found.push_back(it->second);
    }
    const bool gguf = in.format == FileFormat::gguf;
    for (const FileTensor& f : *in.files)
        if (!used.count(f.name) && !ignored(t, c, in, prefix, f.name))
            fail("tensor '" + (gguf ? f.name : f.name.substr(0, 80)) + "' is not one of a " +
                 (gguf ? std::string(t.gguf_name) + " model" : std::string(t.hf_owner)) +
                 "'s that kvscope runs");
    return found;
}

constexpr WeightView kKindView[] = {
    &LlamaWeights::wq, &LlamaWeights::wk,   &LlamaWeights::wv,
    &LlamaWeights::wo, &LlamaWeights::w1,   &LlamaWeights::w2,
    &LlamaWeights::w3, &LlamaWeights::wcls, &LlamaWeights::token_embedding};

// The slot holding a matrix kind's layer (a shared classifier: the embedding table's).
std::size_t slot_of(const std::vector<TensorSlot>& slots, const ModelConfig& c, MatrixKind k,
                    int layer) {
    WeightView v = kKindView[int(k)];
    if (k == MatrixKind::wcls && c.shared_classifier) v = &LlamaWeights::token_embedding;
    for (std::size_t i = 0; i < slots.size(); ++i)
        if (slots[i].row->fills[0] == v && (slots[i].layer < 0 || slots[i].layer == layer))
            return i;
    return 0;
}

// Compact matrices: in the file's own types (as stored) or in the type asked for, the file's
// own bytes where it has them so (kept alive by `keep`), converted otherwise; q and k rows in the
// rotate-half order are put back in order first, in the file's type (copies).
CompactWeights compact_weights(const ModelConfig& c, const TensorLoad& in,
                               const std::vector<TensorSlot>& slots,
                               const std::vector<const FileTensor*>& files) {
    auto side = std::make_shared<std::vector<std::vector<unsigned char>>>();
    auto source = [&](MatrixKind k, int layer) {
        const std::size_t i = slot_of(slots, c, k, layer);
        const FileTensor& f = *files[i];
        if (!slots[i].rope_rows) return MatrixBytes{f.type, f.data};
        const std::size_t rb = ggml_row_bytes(f.type, slots[i].n);
        auto& buf = side->emplace_back(slots[i].rows * rb);
        copy_rotate_half_rows(f.data, buf.data(), slots[i].rows, rb, c.head_dim(), true);
        return MatrixBytes{f.type, buf.data()};
    };
    return make_compact_weights(
        c, in.weights, source,
        std::make_shared<std::pair<std::shared_ptr<const void>,
                                   std::shared_ptr<std::vector<std::vector<unsigned char>>>>>(
            in.keep, side));
}

// One tensor's values into the weights: dequantised, put in our order, split into its parts.
void copy_tensor(const TensorSlot& s, const FileTensor& f, float* base, std::size_t head_dim,
                 std::vector<float>& file_order, std::vector<float>& ours) {
    auto writable = [&](const float* p) { return base + (p - base); };
    const std::size_t n = s.elements();
    if (s.to.size() == 1 && !s.rope_rows && !s.conv1d) {
        dequantize_values(f.type, f.data, n, writable(s.to[0]));
        return;
    }
    file_order.resize(n);
    ours.resize(n);
    dequantize_values(f.type, f.data, n, file_order.data());
    reorder_values(s, file_order.data(), ours.data(), head_dim, false);
    const std::size_t part = n / s.to.size();
    for (std::size_t i = 0; i < s.to.size(); ++i)
        std::copy_n(ours.data() + i * part, part, writable(s.to[i]));
}

}  // namespace

LoadedTensors load_tensors(const ArchTable& t, const ModelConfig& c, const TensorLoad& in,
                           const Refuse& fail) {
    LoadedTensors out;
    const std::vector<TensorSlot> slots = tensor_slots(t, c, in.format);
    const std::vector<const FileTensor*> files = match(t, c, in, slots, out.type_counts, fail);

    std::uint64_t all_floats = 0;
    for (const TensorSlot& s : slots) all_floats += s.elements();
    const std::uint64_t float32_bytes = all_floats * sizeof(float);
    const std::uint64_t kept_bytes =
        in.weights ? kept_weight_bytes(c, *in.weights, float32_bytes)
                   : kept_weight_bytes(c, float32_bytes, [&](MatrixKind k, int l) {
                         return files[slot_of(slots, c, k, l)]->type;
                     });
    // Before anything is copied: the weights as they will be kept (float32, or the matrices
    // compact) and the KV cache must fit where they go.
    check_fits(in.name, kept_bytes, c, in.limits);

    CompactWeights cw;
    std::set<const unsigned char*> in_place;  // tensors the compact matrices point into
    if (!t.float32_only && in.weights != GgmlType::F32) {
        cw = compact_weights(c, in, slots, files);
        for (const CompactMatrix& m : cw.all()) in_place.insert(m.data);
        if (cw.embedding.data) in_place.insert(cw.embedding.data);
    }
    const bool compact = cw.held();
    // Kept compact: the matrices (and a kept embedding table); their float views stay null and
    // the forward pass reads them through CompactWeights.
    auto kept = [&](const TensorSlot& s) {
        const bool embedding = s.row->fills[0] == &LlamaWeights::token_embedding;
        return (compact && s.row->in != Side::one && !embedding) ||
               (cw.embedding.data && embedding);
    };

    // The float32 copy: every weight in llama2.c's order (point_llama_weights), or with compact
    // weights only what is not kept compact, a view's layers one after another. Every tensor was
    // checked against the file's bytes, so it is at most ~7 x the file (Q4_0: 32 floats from 18
    // bytes).
    LlamaWeights& W = out.ck.weights;
    std::shared_ptr<float[]> copy;
    if (!compact) {
        copy = zeroed_floats(all_floats);
        point_llama_weights(W, copy.get(), c, false);
    } else {
        std::vector<std::pair<WeightView, std::uint64_t>> views;  // first appearance, floats
        for (const TensorSlot& s : slots) {
            if (kept(s)) continue;
            const WeightView v = s.row->fills[0];
            auto it =
                std::find_if(views.begin(), views.end(), [&](auto& p) { return p.first == v; });
            if (it == views.end()) it = views.insert(views.end(), {v, 0});
            it->second += s.elements();
        }
        std::uint64_t floats = 0;
        for (const auto& [v, n] : views) floats += n;
        copy = zeroed_floats(floats);
        std::uint64_t at = 0;
        for (const auto& [v, n] : views) W.*v = copy.get() + std::exchange(at, at + n);
        W.all = std::span<const float>(copy.get(), floats);
        if (c.shared_classifier) W.wcls = W.token_embedding;
    }
    const std::vector<TensorSlot> placed = tensor_slots(t, c, in.format, &W);
    std::vector<float> file_order, ours;
    for (std::size_t i = 0; i < placed.size(); ++i) {
        const FileTensor& f = *files[i];
        if (!kept(placed[i])) copy_tensor(placed[i], f, copy.get(), c.head_dim(), file_order, ours);
        if (in.done_with && !in_place.count(f.data)) in.done_with(f.data, f.bytes);
    }
    W.owner = std::move(copy);
    out.ck.config = c;
    out.ck.compact = std::move(cw);
    out.in_place = in_place.size();
    return out;
}

std::string type_counts_text(const std::map<std::string, int>& counts) {
    std::string s;
    for (const auto& [type, n] : counts)
        s.append(" ").append(std::to_string(n)).append(" ").append(type);
    return s;
}

}  // namespace kvs
