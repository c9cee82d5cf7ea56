#pragma once
// Host functions that launch each kernel of kernels/cuda/*.cu on a stream, over a shape from
// launch_shapes.h. They mirror kernels/emu/emu_kernels.h one for one. Only built with nvcc; the
// caller checks cudaGetLastError().
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

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace kvs::kern {

using Stream = CUstream_st*;

// cudaFuncGetAttributes on one kernel, as a cudaError_t: not 0 when this build has no code for the
// current device (every .cu file is built for the same architectures, so one kernel tells).
int kernel_image_status();

void launch_embed(const LaunchShape& s, Stream st, const EmbedArgs& a);
void launch_rmsnorm(const LaunchShape& s, Stream st, const RmsNormArgs& a);
void launch_layernorm(const LaunchShape& s, Stream st, const LayerNormArgs& a);
void launch_matmul_tiled(const LaunchShape& s, Stream st, const MatmulArgs& a);
void launch_matvec(const LaunchShape& s, Stream st, const MatmulArgs& a);
void launch_rope(const LaunchShape& s, Stream st, const RopeArgs& a);
void launch_kv_append(const LaunchShape& s, Stream st, const KvAppendArgs& a);
void launch_attention_prefill(const LaunchShape& s, Stream st, const AttentionArgs& a);
// Decode attention is two launches, split then combine, over AttentionArgs::partial.
void launch_attention_decode_split(const LaunchShape& s, Stream st, const AttentionArgs& a);
void launch_attention_decode_combine(const LaunchShape& s, Stream st, const AttentionArgs& a);
void launch_swiglu(const LaunchShape& s, Stream st, const SwigluArgs& a);
void launch_gelu(const LaunchShape& s, Stream st, const GeluArgs& a);
void launch_add(const LaunchShape& s, Stream st, const AddArgs& a);
void launch_widen(const LaunchShape& s, Stream st, const WidenArgs& a);
// The fused decode kernels; `dependent`: programmatic dependent launch (device_side.cuh).
void launch_fused_norm_qkv(const LaunchShape& s, Stream st, const FusedQkvArgs& a, bool dependent);
void launch_fused_attention(const LaunchShape& s, Stream st, const FusedAttentionArgs& a,
                            bool dependent);
void launch_fused_matvec_add(const LaunchShape& s, Stream st, const FusedMatvecAddArgs& a,
                             bool dependent);
void launch_fused_norm_gate_up(const LaunchShape& s, Stream st, const FusedGateUpArgs& a,
                               bool dependent);
void launch_fused_norm_logits(const LaunchShape& s, Stream st, const FusedLogitsArgs& a,
                              bool dependent);

}  // namespace kvs::kern
