#pragma once
// Emulated launches: each runs one kernel of kernels/cuda/ on the CPU over the launch shape it
// is given, calling the kernel's own __host__ __device__ code. Kernels without barriers run
// thread by thread; rmsnorm, layernorm, both matmuls, prefill attention, the decode split and the
// fused decode kernels run each block's threads in phases between barriers
// (kernels/emu/host_block.h). Shared memory starts as NaN, as a reminder that a GPU's starts as
// garbage: a kernel that reads a cell it never wrote produces NaNs.
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embed.cuh"
#include "kernels/cuda/fused_decode.cuh"
#include "kernels/cuda/kv_append.cuh"
#include "kernels/cuda/launch_shapes.h"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"

namespace kvs::emu {

// Each throws std::logic_error for a shape a GPU would refuse (more than 1024 threads a block,
// a grid y/z above 65535, an empty grid, shared memory over kern::kMaxSharedBytes).
void embed(const kern::LaunchShape& s, const kern::EmbedArgs& a);
void rmsnorm(const kern::LaunchShape& s, const kern::RmsNormArgs& a);
void layernorm(const kern::LaunchShape& s, const kern::LayerNormArgs& a);
void matmul_tiled(const kern::LaunchShape& s, const kern::MatmulArgs& a);
void matvec(const kern::LaunchShape& s, const kern::MatmulArgs& a);
void rope(const kern::LaunchShape& s, const kern::RopeArgs& a);
void kv_append(const kern::LaunchShape& s, const kern::KvAppendArgs& a);
void attention_prefill(const kern::LaunchShape& s, const kern::AttentionArgs& a);
void attention_decode_split(const kern::LaunchShape& s, const kern::AttentionArgs& a);
void attention_decode_combine(const kern::LaunchShape& s, const kern::AttentionArgs& a);
void swiglu(const kern::LaunchShape& s, const kern::SwigluArgs& a);
void gelu(const kern::LaunchShape& s, const kern::GeluArgs& a);
void add(const kern::LaunchShape& s, const kern::AddArgs& a);
// The fused decode kernels (kernels/cuda/fused_decode.cuh).
void fused_norm_qkv(const kern::LaunchShape& s, const kern::FusedQkvArgs& a);
// blocks >= 0: only the first `blocks` blocks run (a fault part-way through the launch).
void fused_attention(const kern::LaunchShape& s, const kern::FusedAttentionArgs& a,
                     int blocks = -1);
void fused_matvec_add(const kern::LaunchShape& s, const kern::FusedMatvecAddArgs& a);
void fused_norm_gate_up(const kern::LaunchShape& s, const kern::FusedGateUpArgs& a);
void fused_norm_logits(const kern::LaunchShape& s, const kern::FusedLogitsArgs& a);

}  // namespace kvs::emu
