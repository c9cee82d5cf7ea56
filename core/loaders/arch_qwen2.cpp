// Qwen2 (Qwen2ForCausalLM, GGUF `qwen2`): Llama's table (core/loaders/arch_llama.cpp) with its
// differences, and nothing else restated: biases on q, k and v (three more tensors, after
// llama's); GGUF q/k rows left in the rotate-half order of its NEOX RoPE (llama.cpp's converter
// permutes llama's to adjacent pairs, not qwen2's); and a sliding window kvscope does not have,
// refused.
#include <vector>

#include "core/loaders/arch_llama.h"

namespace kvs {
namespace {

using W = LlamaWeights;

// clang-format off
// {GGUF name, HF name, per layer, out, in, the weights it fills, flags}: our shape [out, in].
const TensorRow kBiases[] = {
    {"attn_q.bias", "self_attn.q_proj.bias", true, Side::dim,    Side::one, {&W::bq}, kRopeRows},
    {"attn_k.bias", "self_attn.k_proj.bias", true, Side::kv_dim, Side::one, {&W::bk}, kRopeRows},
    {"attn_v.bias", "self_attn.v_proj.bias", true, Side::kv_dim, Side::one, {&W::bv}},
};
// clang-format on

// Llama's tensors, then the biases, as point_llama_weights takes them.
const std::vector<TensorRow>& qwen2_tensors() {
    static const std::vector<TensorRow> rows = [] {
        const auto llama = llama_arch().tensors;
        std::vector<TensorRow> r(llama.begin(), llama.end());
        r.insert(r.end(), std::begin(kBiases), std::end(kBiases));
        return r;
    }();
    return rows;
}

void qwen2_hf_refusals(const nlohmann::json& j, const Refuse& fail) {
    if (const auto it = j.find("use_sliding_window"); it != j.end() && *it == true)
        fail("use_sliding_window is true (kvscope's attention sees every earlier token)");
    llama_hf_refusals(j, fail);
}

}  // namespace

const ArchTable& qwen2_arch() {
    static const ArchTable t = [] {
        ArchTable q = llama_arch();
        q.gguf_name = "qwen2";
        q.hf_class = "Qwen2ForCausalLM";
        q.hf_model_type = "qwen2";
        q.hf_owner = "Qwen2ForCausalLM model";
        q.qkv_bias = true;
        q.gguf_rope_rows = true;
        q.tensors = qwen2_tensors();
        q.hf_refusals = qwen2_hf_refusals;
        return q;
    }();
    return t;
}

}  // namespace kvs
