#include "core/loaders/gguf_llama.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/files/mapped_file.h"
#include "core/loaders/load_pipeline.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/gguf_tokenizer.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
GgufLlama parse_gguf_llama(const unsigned char* data, std::size_t size, const std::string& name,
                           const GgufDoneWith& done_with, const OpenLimits& limits,
                           WeightsWanted weights, std::shared_ptr<const void> keep) {
    const GgufFile f = GgufFile::parse(data, size, name);
    const auto arch = f.get_string("general.architecture");
    const Refuse unknown{name + ": GGUF llama model"};
    if (!arch) unknown("no general.architecture");
    const ArchTable* t = arch_of_gguf(*arch);
    if (!t)
        unknown("architecture '" + std::string(*arch).substr(0, 40) +
                "' is not supported (kvscope runs " + gguf_arch_names() + ")");
    const Refuse fail{name + ": GGUF " + t->gguf_label + " model"};
    if (t->float32_only) {  // as stored means dequantised there
        if (weights.value_or(GgmlType::F32) != GgmlType::F32)
            fail("--weights " + weight_type_option_name(*weights) + ": the " + t->gguf_name +
                 " architecture runs with float32 weights only");
        weights = GgmlType::F32;
    }
    std::string context_note;
    const ModelConfig c = gguf_config(*t, f, limits, context_note, fail);
    std::vector<FileTensor> files;
    for (const GgufTensorInfo& i : f.tensors())
        files.push_back({std::string(i.name), i.type, i.data, i.dims, i.elements, i.bytes});
    LoadedTensors lt = load_tensors(
        *t, c, {FileFormat::gguf, &files, weights, std::move(keep), done_with, limits, name}, fail);

    GgufTokenizer gt = tokenizer_from_gguf(f, c.vocab_size);
    GgufLlama g{std::move(lt.ck), std::move(gt.tok), std::move(gt.stop), {}};
    g.format = "GGUF v" + std::to_string(f.version()) + ", " + t->gguf_name +
               ", tensors:" + type_counts_text(lt.type_counts);
    const CompactWeights& cw = g.ck.compact;
    if (cw.held())
        g.format +=
            ", matrices kept " +
            (weights ? "as " + weight_type_option_name(*weights) : std::string("as stored")) +
            " (" + cw.types() + "; " + std::to_string(lt.in_place) + " tensors used in place), " +
            (cw.embedding.data
                 ? "embedding table kept " + std::string(ggml_type_name(cw.embedding.type)) +
                       ", norms dequantised to float32"
                 : "embeddings and norms dequantised to float32") +
            context_note;
    else
        g.format += t->gguf_note + context_note;
    return g;
}

std::unique_ptr<Model> load_gguf_model(const std::string& path, const std::string& model_name,
                                       const OpenLimits& limits, WeightsWanted weights) {
    auto map = MappedFile::open(path, kMaxModelFileBytes);
    GgufLlama g = parse_gguf_llama(
        map->data(), map->size(), path,
        [&map](const unsigned char* p, std::size_t n) { map->release(p, n); }, limits, weights,
        map);
    map.reset();  // float32 copies now, or compact matrices that keep the mapping themselves
    return make_gguf_model(std::move(g), model_name);
}

std::unique_ptr<Model> make_gguf_model(GgufLlama g, const std::string& model_name) {
    return std::make_unique<TransformerModel>(std::move(g.ck), std::move(g.tok), std::move(g.stop),
                                              model_name, std::move(g.format));
}

}  // namespace kvs
