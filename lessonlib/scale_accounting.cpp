#include "lessonlib/scale_accounting.h"

#include "core/model/counts.h"
#include "core/model/kv_what_if.h"
#include "core/util/error.h"

namespace kvs {
namespace {

ModelConfig shape(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int ctx) {
    ModelConfig c;
    c.dim = dim;
    c.hidden_dim = hidden;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = kv_heads;
    c.vocab_size = vocab;
    c.seq_len = ctx;
    c.shared_classifier = false;  // all of these have a separate output matrix
    return c;
}

}  // namespace

const std::vector<ScaleModel>& scale_models() {
    static const std::vector<ScaleModel> m = {
        {"llama2-7b", "Llama 2 7B", shape(4096, 11008, 32, 32, 32, 32000, 4096),
         "Touvron et al. 2023, Llama 2 (Table 1) and the released config.json"},
        {"llama2-13b", "Llama 2 13B", shape(5120, 13824, 40, 40, 40, 32000, 4096),
         "Touvron et al. 2023, Llama 2, and the released config.json"},
        {"llama2-70b", "Llama 2 70B", shape(8192, 28672, 80, 64, 8, 32000, 4096),
         "Touvron et al. 2023, Llama 2 (GQA with 8 K/V heads), and the released config.json"},
        {"llama3.1-8b", "Llama 3.1 8B", shape(4096, 14336, 32, 32, 8, 128256, 131072),
         "Meta, Llama 3.1 model card and config.json (128K context)"},
        {"llama3.1-70b", "Llama 3.1 70B", shape(8192, 28672, 80, 64, 8, 128256, 131072),
         "Meta, Llama 3.1 model card and config.json (128K context)"},
    };
    return m;
}

const std::vector<ScaleGpu>& scale_gpus() {
    // Dense tensor-core peaks: the datasheets print the FP16/BF16 figure with 2:4 sparsity
    // (1,979 TFLOPS for H100/H200 SXM, 624 for A100) and note that dense is half of it.
    static const std::vector<ScaleGpu> g = {
        {"h100-sxm", "NVIDIA H100 SXM 80GB", 989.4e12, 3.35e12, 80e9,
         "NVIDIA H100 Tensor Core GPU datasheet: BF16 1,979 TFLOPS with sparsity, 3.35 TB/s HBM3"},
        {"h200-sxm", "NVIDIA H200 SXM 141GB", 989.4e12, 4.8e12, 141e9,
         "NVIDIA H200 Tensor Core GPU datasheet: BF16 1,979 TFLOPS with sparsity, 4.8 TB/s HBM3e"},
        {"a100-80gb-sxm", "NVIDIA A100 SXM 80GB", 312e12, 2.039e12, 80e9,
         "NVIDIA A100 Tensor Core GPU datasheet: BF16 312 TFLOPS (624 with sparsity), 2,039 GB/s"},
    };
    return g;
}

const ScaleModel* find_scale_model(const std::string& key) {
    for (const auto& m : scale_models())
        if (m.key == key) return &m;
    return nullptr;
}

const ScaleGpu* find_scale_gpu(const std::string& key) {
    for (const auto& g : scale_gpus())
        if (g.key == key) return &g;
    return nullptr;
}

ScaleModel scale_model_of(const std::string& name, const ModelConfig& c) {
    return {kLoadedModel, name, c, "the model this lesson has loaded: its own shapes"};
}

ScaleReport scale_report(const ScaleQuery& q) {
    const ScaleModel* m = find_scale_model(q.model);
    if (!m) throw Error("unknown model '" + q.model + "' for @scale");
    return scale_report(q, *m);
}

ScaleReport scale_report(const ScaleQuery& q, const ScaleModel& model) {
    const ScaleModel* m = &model;
    const ScaleGpu* g = find_scale_gpu(q.gpu);
    if (!g) throw Error("unknown gpu '" + q.gpu + "' for @scale");
    const ModelConfig& c = m->config;
    if (q.context < 1 || q.context > c.seq_len)
        throw Error(m->name + " has a context of " + std::to_string(c.seq_len) + " tokens, not " +
                    std::to_string(q.context));
    if (q.batch < 1) throw Error("@scale batch must be at least 1");

    ScaleReport r;
    r.query = q;
    r.model = *m;
    r.gpu = *g;
    const double bpv = q.bytes_per_value, B = q.batch;
    r.params = static_cast<double>(c.parameter_count());
    r.weight_bytes = weight_bytes(c, bpv);
    r.kv_bytes_per_token =
        static_cast<double>(kv_bytes_per_token(c, c.n_kv_heads, q.bytes_per_value));
    r.kv_bytes = r.kv_bytes_per_token * q.context * B;
    r.ridge = g->peak_flops / g->bandwidth;

    // One sequence's counts; a batch shares one read of the weights.
    auto batched = [&](const StepCounts& one) {
        PhaseCost p;
        p.flops = B * one.flops;
        p.attention_flops = B * one.attention_flops;
        p.bytes = r.weight_bytes + B * (one.bytes - r.weight_bytes);
        p.intensity = p.flops / p.bytes;
        p.compute_seconds = p.flops / g->peak_flops;
        p.memory_seconds = p.bytes / g->bandwidth;
        p.memory_bound = p.memory_seconds > p.compute_seconds;
        return p;
    };
    r.prefill = batched(count_llama_forward(c, 0, q.context, bpv));
    r.decode = batched(count_llama_forward(c, q.context - 1, 1, bpv));
    r.fits = r.weight_bytes + r.kv_bytes <= g->memory;
    return r;
}

}  // namespace kvs
