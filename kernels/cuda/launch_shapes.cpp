#include "kernels/cuda/launch_shapes.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/util/error.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embed.cuh"
#include "kernels/cuda/kv_append.cuh"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"

namespace kvs::kern {
namespace {

// Keys of one attention chunk for these shapes; kvs::Error when not even one fits.
unsigned chunk_keys_or_throw(int n_heads, int n_kv_heads, int head_dim, bool flash) {
    const unsigned keys = attention_chunk_keys(n_heads / n_kv_heads, head_dim, flash);
    if (keys == 0)
        throw Error("CUDA attention with head size " + std::to_string(head_dim) + " and " +
                    std::to_string(n_heads / n_kv_heads) +
                    " query heads per kv head: one key's rows do not fit in " +
                    std::to_string(kMaxSharedBytes) + " bytes of shared memory");
    return keys;
}

}  // namespace

std::vector<BlockVariant> block_variants(Op op, int T) {
    std::vector<BlockVariant> v;
    const auto add = [&](const char* kernel, unsigned BlockSizes::*field,
                         std::initializer_list<unsigned> values, const char* unit) {
        for (unsigned n : values) {
            BlockSizes b;
            const bool is_default = b.*field == n;
            b.*field = n;
            v.push_back({std::string(kernel) + " " + std::to_string(n) + " " + unit +
                             (is_default ? "*" : ""),
                         b});
        }
    };
    switch (op) {
        case Op::RmsNorm:
            add("rmsnorm", &BlockSizes::rmsnorm, {32, 64, 128}, "threads");
            break;
        case Op::LayerNorm:
            add("layernorm", &BlockSizes::layernorm, {32, 64, 128}, "threads");
            break;
        case Op::Matmul:
            if (matmul_uses_matvec(T)) {
                v.push_back({"matvec auto rows*", BlockSizes{}});
                add("matvec", &BlockSizes::matvec_rows, {4, 8, 16, 32}, "rows");
            }
            break;
        case Op::Attention:
            if (attention_uses_decode(T))
                add("combine", &BlockSizes::attention, {32, 64, 128, 256}, "threads");
            break;
        case Op::SwiGLU:
        case Op::Gelu:
        case Op::Add:
            add("elementwise", &BlockSizes::elementwise, {128, 256, 512, 1024}, "threads");
            break;
        default:
            break;
    }
    return v;
}

void check_launch_shape(const LaunchShape& s, const char* kernel) {
    const unsigned long long threads = 1ull * s.block.x * s.block.y * s.block.z;
    const bool ok = s.grid.x >= 1 && s.grid.y >= 1 && s.grid.z >= 1 && s.grid.y <= 65535 &&
                    s.grid.z <= 65535 && threads >= 1 && threads <= 1024 && s.block.z <= 64 &&
                    s.shared_bytes <= kMaxSharedBytes;
    if (!ok)
        throw std::logic_error(std::string("launch of ") + kernel +
                               ": a grid or block shape a GPU would refuse");
}

LaunchShape embed_shape(int T, int dim) {
    return {{unsigned(T), blocks_for(unsigned(dim), kEmbedThreads), 1}, {kEmbedThreads, 1, 1}, 0};
}

LaunchShape rmsnorm_shape(int T, unsigned threads) {
    if (threads > kRmsSlots)  // more threads than partial sums would idle
        throw std::logic_error("rmsnorm with more than kRmsSlots threads a block");
    return {{unsigned(T), 1, 1}, {threads, 1, 1}, 0};
}

LaunchShape layernorm_shape(int T, unsigned threads) {
    if (threads > kLayerNormThreads)  // LayerNormShared holds kLayerNormThreads partial sums
        throw std::logic_error("layernorm with more than kLayerNormThreads threads a block");
    return {{unsigned(T), 1, 1}, {threads, 1, 1}, 0};
}

LaunchShape matvec_shape(int d, unsigned rows) {
    if (rows == 0) {
        rows = kMatvecRows;
        while (rows > 1 && blocks_for(unsigned(d), rows) < kMatvecMinBlocks) rows /= 2;
    }
    return {{blocks_for(unsigned(d), rows), 1, 1}, {kMatvecLanes, rows, 1}, 0};
}

LaunchShape matmul_tiled_shape(int T, int d) {
    return {
        {blocks_for(unsigned(d), kTile), blocks_for(unsigned(T), kTile), 1}, {kTile, kTile, 1}, 0};
}

LaunchShape rope_shape(int T, int dim) {
    return {{unsigned(T), blocks_for(unsigned(dim / 2), kRopeThreads), 1}, {kRopeThreads, 1, 1}, 0};
}

LaunchShape kv_append_shape(int T, int kv_dim) {
    return {
        {blocks_for(std::size_t(T) * kv_dim, kKvAppendThreads), 1, 1}, {kKvAppendThreads, 1, 1}, 0};
}

LaunchShape attention_prefill_shape(int T, int n_heads, int n_kv_heads, int head_dim) {
    const unsigned keys = chunk_keys_or_throw(n_heads, n_kv_heads, head_dim, true);
    const std::size_t floats = chunk_shared_floats(keys, n_heads / n_kv_heads, head_dim, true);
    return {{unsigned(T), unsigned(n_kv_heads), 1}, {kChunkThreads, 1, 1}, floats * sizeof(float)};
}

LaunchShape attention_decode_split_shape(int n_keys, int n_heads, int n_kv_heads, int head_dim) {
    const unsigned keys = chunk_keys_or_throw(n_heads, n_kv_heads, head_dim, false);
    const unsigned chunks = decode_chunks(n_keys, keys);
    const unsigned most = std::max(1u, kSplitBlocks / unsigned(n_kv_heads));
    const std::size_t floats = chunk_shared_floats(keys, n_heads / n_kv_heads, head_dim, false);
    return {{unsigned(n_kv_heads), std::min(chunks, most), 1},
            {kChunkThreads, 1, 1},
            floats * sizeof(float)};
}

LaunchShape attention_decode_combine_shape(int n_heads, unsigned threads) {
    return {{unsigned(n_heads), 1, 1}, {threads, 1, 1}, 0};
}

LaunchShape fused_qkv_shape(int dim, int kv_dim) {
    const unsigned pairs = unsigned(dim + 2 * kv_dim) / 2;
    return {{blocks_for(pairs, kFusedWarps), 1, 1},
            {kWarpSize, kFusedWarps, 1},
            std::size_t(fused_stage_floats(dim)) * sizeof(float)};
}

LaunchShape fused_rows_shape(int rows, int normed_dim) {
    return {{blocks_for(unsigned(rows), kFusedWarps), 1, 1},
            {kWarpSize, kFusedWarps, 1},
            std::size_t(fused_stage_floats(normed_dim)) * sizeof(float)};
}

LaunchShape fused_attention_shape(int n_keys, int n_heads, int n_kv_heads, int head_dim) {
    return attention_decode_split_shape(n_keys, n_heads, n_kv_heads, head_dim);
}

std::size_t decode_partial_floats_for_cache(std::size_t cache_floats, int n_heads, int n_kv_heads,
                                            int head_dim) {
    const std::size_t capacity = cache_floats / (std::size_t(n_kv_heads) * head_dim);
    const unsigned keys = chunk_keys_or_throw(n_heads, n_kv_heads, head_dim, false);
    return decode_partial_floats(n_heads, static_cast<int>(capacity), head_dim, keys);
}

LaunchShape elementwise_shape(std::size_t n, unsigned threads) {
    return {{blocks_for(n, threads), 1, 1}, {threads, 1, 1}, 0};
}

}  // namespace kvs::kern
