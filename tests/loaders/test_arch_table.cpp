// The architecture tables (core/loaders/arch_table.h) agree with the forward pass they describe:
// every weight the model's layout has (point_llama_weights) is filled by exactly one tensor, each
// name is used once per format, the flags match what ModelConfig selects, and a file is found by
// its GGUF name or its config.json class.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/loaders/arch_table.h"
#include "core/loaders/tensor_slots.h"

using namespace kvs;

namespace {

ModelConfig shapes_of(const ArchTable& t, bool shared) {
    ModelConfig c;
    c.arch = t.arch;
    c.qkv_bias = t.qkv_bias;
    c.dim = 16, c.hidden_dim = 40, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2;
    if (t.arch == Architecture::Gpt2) c.n_kv_heads = c.n_heads, c.n_positions = 12;
    c.vocab_size = 30, c.seq_len = 12, c.shared_classifier = shared;
    return c;
}

const WeightView kAllViews[] = {&LlamaWeights::token_embedding,
                                &LlamaWeights::norm_att,
                                &LlamaWeights::wq,
                                &LlamaWeights::wk,
                                &LlamaWeights::wv,
                                &LlamaWeights::wo,
                                &LlamaWeights::norm_ffn,
                                &LlamaWeights::w1,
                                &LlamaWeights::w2,
                                &LlamaWeights::w3,
                                &LlamaWeights::norm_final,
                                &LlamaWeights::wcls,
                                &LlamaWeights::bq,
                                &LlamaWeights::bk,
                                &LlamaWeights::bv,
                                &LlamaWeights::pos_embedding,
                                &LlamaWeights::norm_att_bias,
                                &LlamaWeights::bo,
                                &LlamaWeights::norm_ffn_bias,
                                &LlamaWeights::b1,
                                &LlamaWeights::b2,
                                &LlamaWeights::norm_final_bias};

}  // namespace

TEST_CASE("each architecture table fills every weight of its layout once, by one name per format",
          "[loaders][arch]") {
    for (const ArchTable* t : all_archs())
        for (const bool shared : {false, true}) {
            INFO(t->gguf_name << (shared ? ", tied" : ", separate classifier"));
            const ModelConfig c = shapes_of(*t, shared);
            std::vector<float> floats(c.stored_floats());
            LlamaWeights w;
            point_llama_weights(w, floats.data(), c, false);
            // Every float of the layout (without llama2.c's freq_cis), covered by the tensors'
            // parts exactly once.
            std::vector<int> covered(w.all.size(), 0);
            for (const FileFormat f : {FileFormat::gguf, FileFormat::hf}) {
                std::fill(covered.begin(), covered.end(), 0);
                std::set<std::string> names;
                for (const TensorSlot& s : tensor_slots(*t, c, f, &w)) {
                    CHECK(names.insert(s.name).second);
                    const std::size_t part = s.elements() / s.to.size();
                    for (const float* p : s.to)
                        for (std::size_t i = 0; i < part; ++i) ++covered[p - floats.data() + i];
                }
                CHECK(std::count(covered.begin(), covered.end(), 1) == long(covered.size()));
            }
            // The views the layout sets are the ones the table fills (a tied classifier is the
            // embedding table's view).
            std::vector<WeightView> filled;  // member pointers have no order: a list
            for (const TensorRow& r : t->tensors)
                if (!(r.classifier() && shared))
                    filled.insert(filled.end(), r.fills.begin(), r.fills.end());
            for (const WeightView v : kAllViews)
                if (!(v == &LlamaWeights::wcls && shared))
                    CHECK((w.*v != nullptr) == (std::count(filled.begin(), filled.end(), v) == 1));
        }
}

TEST_CASE("the tables' flags are the forward pass's differences", "[loaders][arch]") {
    for (const ArchTable* t : all_archs()) {
        INFO(t->gguf_name);
        ModelConfig c = shapes_of(*t, true);
        const bool gpt2 = c.gpt2();
        CHECK((t->norm == NormKind::layer) == gpt2);
        CHECK((t->ffn == FfnKind::gelu) == gpt2);
        CHECK((t->positions == PositionKind::learned) == gpt2);
        CHECK(t->qkv_bias == c.qkv_bias);
        CHECK(&arch_of(c) == t);
        CHECK(arch_of_gguf(t->gguf_name) == t);
        CHECK(arch_of_hf(t->hf_class, "") == t);
    }
    CHECK(arch_of_hf("?", "gpt2") == &gpt2_arch());  // model_type alone names GPT-2 only
    CHECK(arch_of_hf("?", "llama") == nullptr);
    CHECK(arch_of_gguf("gpt3") == nullptr);
    CHECK(gguf_arch_names() == "'llama', 'qwen2' and 'gpt2'");
    CHECK(hf_arch_names() == "LlamaForCausalLM, Qwen2ForCausalLM and GPT2LMHeadModel");
}
