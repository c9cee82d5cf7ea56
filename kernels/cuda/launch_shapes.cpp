#include "kernels/cuda/launch_shapes.h"

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

LaunchShape attention_shape(Dim3 grid, int n_keys, int group, unsigned threads) {
    const std::size_t bytes = attention_shared_floats(n_keys, group, threads) * sizeof(float);
    if (bytes > kMaxSharedBytes)
        throw Error("CUDA attention over " + std::to_string(n_keys) + " keys needs " +
                    std::to_string(bytes) + " bytes of shared memory per block, more than " +
                    std::to_string(kMaxSharedBytes));
    return {grid, {threads, 1, 1}, bytes};
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
            if (matmul_uses_matvec(T))
                add("matvec", &BlockSizes::matvec_rows, {4, 8, 16, 32}, "rows");
            break;
        case Op::Attention:
            add(attention_uses_decode(T) ? "combine" : "prefill", &BlockSizes::attention,
                {32, 64, 128, 256}, "threads");
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
    if (threads > kRmsThreads)  // RmsNormShared holds kRmsThreads partial sums
        throw std::logic_error("rmsnorm with more than kRmsThreads threads a block");
    return {{unsigned(T), 1, 1}, {threads, 1, 1}, 0};
}

LaunchShape layernorm_shape(int T, unsigned threads) {
    if (threads > kLayerNormThreads)  // LayerNormShared holds kLayerNormThreads partial sums
        throw std::logic_error("layernorm with more than kLayerNormThreads threads a block");
    return {{unsigned(T), 1, 1}, {threads, 1, 1}, 0};
}

LaunchShape matvec_shape(int d, unsigned rows) {
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

LaunchShape attention_prefill_shape(int T, int pos0, int n_heads, unsigned threads) {
    return attention_shape({unsigned(T), unsigned(n_heads), 1}, pos0 + T, 1, threads);
}

LaunchShape attention_decode_split_shape(int pos0, int n_heads, int n_kv_heads, int head_dim) {
    const std::size_t bytes =
        decode_split_shared_floats(n_heads / n_kv_heads, head_dim) * sizeof(float);
    const unsigned chunks = decode_chunks(pos0 + 1);
    if (bytes > kMaxSharedBytes || chunks > 65535)
        throw Error("CUDA decode attention over " + std::to_string(pos0 + 1) +
                    " keys of head size " + std::to_string(head_dim) + " needs " +
                    std::to_string(bytes) + " bytes of shared memory per block (at most " +
                    std::to_string(kMaxSharedBytes) + ") and " + std::to_string(chunks) +
                    " chunks of keys (at most 65535)");
    return {{unsigned(n_kv_heads), chunks, 1}, {kDecodeThreads, 1, 1}, bytes};
}

LaunchShape attention_decode_combine_shape(int n_heads, unsigned threads) {
    return {{unsigned(n_heads), 1, 1}, {threads, 1, 1}, 0};
}

std::size_t decode_partial_floats_for_cache(std::size_t cache_floats, int n_heads, int n_kv_heads,
                                            int head_dim) {
    const std::size_t capacity = cache_floats / (std::size_t(n_kv_heads) * head_dim);
    return decode_partial_floats(n_heads, static_cast<int>(capacity), head_dim);
}

LaunchShape elementwise_shape(std::size_t n, unsigned threads) {
    return {{blocks_for(n, threads), 1, 1}, {threads, 1, 1}, 0};
}

}  // namespace kvs::kern
