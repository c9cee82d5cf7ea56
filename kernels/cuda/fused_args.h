#pragma once
// The fused decode ops of core/model/fused_ops.h as kernel arguments and launch shapes
// (kernels/cuda/fused_decode.cuh), for both CUDA backends: the cuda one launches them on a
// stream, the emulated one on the CPU. Host C++; no CUDA needed, and C++17 (the CUDA backend
// includes it).
#include "core/model/fused_ops.h"
#include "kernels/cuda/fused_decode.cuh"
#include "kernels/cuda/launch_shapes.h"

namespace kvs::kern {

// The kernels' code for a weight type (core/files/gguf_file.h's GgmlType): kWeightF32,
// kWeightF16, kWeightBF16; -1 for one they do not read.
int weight_kind(GgmlType t);
MatrixRef matrix_ref(const FusedMatrix& m);

// Where the launches find what a recorded graph cannot carry by value: the token id and the
// position (device memory written before each replay; null outside a recording), the decode
// partial results and the tickets of the attention kernel.
struct FusedPlaces {
    const int* token = nullptr;   // the token id on the device
    const int* pos_at = nullptr;  // in a recording: the position, read at each replay
    float* partial = nullptr;     // [n_heads, chunks of the capacity, head_dim + 2]
    int* tickets = nullptr;       // [n_kv_heads], zero
    int max_keys = 0;             // keys the attention grid is sized for
};

FusedQkvArgs fused_qkv_args(const FusedOps::NormQkv& a, const FusedPlaces& at);
FusedAttentionArgs fused_attention_args(const FusedOps::Attend& a, const FusedPlaces& at);
LaunchShape fused_attention_launch(const FusedOps::Attend& a, const FusedPlaces& at);

}  // namespace kvs::kern
