#include "kernels/emu/emu_kernels.h"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/emu/host_block.h"

namespace kvs::emu {
namespace {

thread_local ThreadOrder g_order = ThreadOrder::Forward;
thread_local unsigned g_block_order = 0;

using kern::check_launch_shape;

// Shared memory as a block finds it: never written, here NaN.
template <class S>
S fresh_shared() {
    static_assert(sizeof(S) % sizeof(float) == 0);
    S s;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    float cells[sizeof(S) / sizeof(float)];
    for (float& c : cells) c = nan;
    std::memcpy(&s, cells, sizeof(S));
    return s;
}

std::vector<float> fresh_dynamic_shared(const LaunchShape& s) {
    return std::vector<float>(s.shared_bytes / sizeof(float),
                              std::numeric_limits<float>::quiet_NaN());
}

}  // namespace

void set_thread_order(ThreadOrder order) {
    g_order = order;
}
ThreadOrder thread_order() {
    return g_order;
}

void set_block_order(unsigned persistent_grid) {
    g_block_order = persistent_grid;
}
unsigned block_order() {
    return g_block_order;
}

void embed(const LaunchShape& s, const kern::EmbedArgs& a) {
    check_launch_shape(s, "embed");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::embed_thread(ix, a); });
}

void rmsnorm(const LaunchShape& s, const kern::RmsNormArgs& a) {
    check_launch_shape(s, "rmsnorm");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::RmsNormShared>();
        kern::rmsnorm_block(b, a, sm);
    });
}

void layernorm(const LaunchShape& s, const kern::LayerNormArgs& a) {
    check_launch_shape(s, "layernorm");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::LayerNormShared>();
        kern::layernorm_block(b, a, sm);
    });
}

void matmul_tiled(const LaunchShape& s, const kern::MatmulArgs& a) {
    check_launch_shape(s, "matmul_tiled");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::MatmulTiles>();
        kern::matmul_tiled_block(b, a, sm);
    });
}

void matvec(const LaunchShape& s, const kern::MatmulArgs& a) {
    check_launch_shape(s, "matvec");
    for_each_block(s, [&](HostBlock& b) { kern::matvec_block(b, a); });
}

void rope(const LaunchShape& s, const kern::RopeArgs& a) {
    check_launch_shape(s, "rope");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::rope_thread(ix, a); });
}

void kv_append(const LaunchShape& s, const kern::KvAppendArgs& a) {
    check_launch_shape(s, "kv_append");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::kv_append_thread(ix, a); });
}

void attention_prefill(const LaunchShape& s, const kern::AttentionArgs& a) {
    check_launch_shape(s, "attention_prefill");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_dynamic_shared(s);
        kern::attention_prefill_block(b, a, sm.data());
    });
}

void attention_decode_split(const LaunchShape& s, const kern::AttentionArgs& a) {
    check_launch_shape(s, "attention_decode_split");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_dynamic_shared(s);
        kern::attention_decode_split_block(b, a, sm.data());
    });
}

void attention_decode_combine(const LaunchShape& s, const kern::AttentionArgs& a) {
    check_launch_shape(s, "attention_decode_combine");
    for_each_thread(s,
                    [&](const ThreadIndex& ix) { kern::attention_decode_combine_thread(ix, a); });
}

void swiglu(const LaunchShape& s, const kern::SwigluArgs& a) {
    check_launch_shape(s, "swiglu");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::swiglu_thread(ix, a); });
}

void gelu(const LaunchShape& s, const kern::GeluArgs& a) {
    check_launch_shape(s, "gelu");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::gelu_thread(ix, a); });
}

void add(const LaunchShape& s, const kern::AddArgs& a) {
    check_launch_shape(s, "add");
    for_each_thread(s, [&](const ThreadIndex& ix) { kern::add_thread(ix, a); });
}

void fused_norm_qkv(const LaunchShape& s, const kern::FusedQkvArgs& a) {
    check_launch_shape(s, "fused_norm_qkv");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::RmsNormShared>();
        auto stage = fresh_dynamic_shared(s);
        kern::fused_norm_qkv_block(b, a, sm, stage.data());
    });
}

void fused_attention(const LaunchShape& s, const kern::FusedAttentionArgs& a, int blocks) {
    check_launch_shape(s, "fused_attention");
    int ran = 0;
    for_each_block(s, [&](HostBlock& b) {
        if (blocks >= 0 && ran++ >= blocks) return;
        auto sm = fresh_dynamic_shared(s);
        kern::fused_attention_block(b, a, sm.data());
    });
}

void fused_matvec_add(const LaunchShape& s, const kern::FusedMatvecAddArgs& a) {
    check_launch_shape(s, "fused_matvec_add");
    for_each_block(s, [&](HostBlock& b) { kern::fused_matvec_add_block(b, a); });
}

void fused_norm_gate_up(const LaunchShape& s, const kern::FusedGateUpArgs& a) {
    check_launch_shape(s, "fused_norm_gate_up");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::RmsNormShared>();
        auto stage = fresh_dynamic_shared(s);
        kern::fused_norm_gate_up_block(b, a, sm, stage.data());
    });
}

void fused_norm_logits(const LaunchShape& s, const kern::FusedLogitsArgs& a) {
    check_launch_shape(s, "fused_norm_logits");
    for_each_block(s, [&](HostBlock& b) {
        auto sm = fresh_shared<kern::RmsNormShared>();
        auto stage = fresh_dynamic_shared(s);
        kern::fused_norm_logits_block(b, a, sm, stage.data());
    });
}

}  // namespace kvs::emu
