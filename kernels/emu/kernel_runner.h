#pragma once
// How the emulated backend runs a kernel over its launch shape: the emulator (emu_kernels.h: the
// kernels' own __host__ __device__ code, one thread at a time, phase by phase), or the CPU shim
// (kernels/shim/: the .cu files compiled as C++, one OS thread per CUDA thread, real barriers),
// which tests link to run whole passes and the op harness through the kernel files themselves.
#include "kernels/emu/emu_kernels.h"

namespace kvs {

struct KernelRunner {
    const char* backend_name;  // Backend::name() of an emulated backend running these
    const char* device;        // and its device() words
    void (*embed)(const kern::LaunchShape&, const kern::EmbedArgs&);
    void (*rmsnorm)(const kern::LaunchShape&, const kern::RmsNormArgs&);
    void (*layernorm)(const kern::LaunchShape&, const kern::LayerNormArgs&);
    void (*matmul_tiled)(const kern::LaunchShape&, const kern::MatmulArgs&);
    void (*matvec)(const kern::LaunchShape&, const kern::MatmulArgs&);
    void (*rope)(const kern::LaunchShape&, const kern::RopeArgs&);
    void (*kv_append)(const kern::LaunchShape&, const kern::KvAppendArgs&);
    void (*attention_prefill)(const kern::LaunchShape&, const kern::AttentionArgs&);
    void (*attention_decode_split)(const kern::LaunchShape&, const kern::AttentionArgs&);
    void (*attention_decode_combine)(const kern::LaunchShape&, const kern::AttentionArgs&);
    void (*swiglu)(const kern::LaunchShape&, const kern::SwigluArgs&);
    void (*gelu)(const kern::LaunchShape&, const kern::GeluArgs&);
    void (*add)(const kern::LaunchShape&, const kern::AddArgs&);
    void (*fused_norm_qkv)(const kern::LaunchShape&, const kern::FusedQkvArgs&);
    // blocks >= 0: the first `blocks` blocks only (a fault part-way; the emulator alone).
    void (*fused_attention)(const kern::LaunchShape&, const kern::FusedAttentionArgs&, int blocks);
    void (*fused_matvec_add)(const kern::LaunchShape&, const kern::FusedMatvecAddArgs&);
    void (*fused_norm_gate_up)(const kern::LaunchShape&, const kern::FusedGateUpArgs&);
    void (*fused_norm_logits)(const kern::LaunchShape&, const kern::FusedLogitsArgs&);
};

const KernelRunner& emulator_runner();

}  // namespace kvs
