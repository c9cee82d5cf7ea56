// info: what a model is (architecture, file format and number type, shapes, tokenizer) and what
// its KV cache costs per token, computed from the shapes.
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "core/loaders/model_loader.h"
#include "core/model/compact_weights.h"
#include "core/model/transformer_model.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/utf8.h"

namespace kvs::cli {

std::vector<OptionSpec> info_options() {
    return model_options();
}

int cmd_info(int argc, char** argv) {
    const Args a = model_args("info", info_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Print a model's architecture, file format, shapes, tokenizer and what the KV cache "
            "costs per token.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    Opened o = open_from(a);
    const double open_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Model& m = *o.model;
    const ModelConfig& c = m.config();
    std::printf("model %s: %s\n", escape_for_one_line(m.name()).c_str(), c.describe().c_str());
    // Where a named model was found (the assets beside an install, the source tree, the
    // Hugging Face cache, Ollama's store).
    const std::string file = model_path_of(a.str("model", "default"));
    if (!file.empty()) std::printf("file: %s\n", escape_for_one_line(file).c_str());
    std::printf("architecture: %s\n", m.is_toy()   ? "toy (hand-made heads)"
                                      : c.gpt2()   ? architecture_name(c.arch)
                                      : c.qkv_bias ? "qwen2 (llama with q/k/v biases)"
                                                   : "llama");
    if (!m.format().empty()) std::printf("format: %s\n", m.format().c_str());
    std::printf("tokenizer: %s\n", escape_for_one_line(m.tokenizer().kind()).c_str());
    const std::size_t params = m.parameter_count();
    std::printf("parameters %zu (%s float32)\n", params, format_bytes(4.0 * params).c_str());
    if (const auto* llama = dynamic_cast<const TransformerModel*>(&m)) {
        // What is kept, and what one decode token reads of it (counted from shapes).
        const CompactWeights& cw = llama->compact();
        const std::string per_token = format_bytes(double(weight_bytes_per_token(c, cw)));
        if (cw.held())
            std::printf("weights: matrices kept %s (%s), %s; %s read per decode token\n",
                        cw.types().c_str(), format_bytes(double(cw.bytes)).c_str(),
                        cw.embedding.data ? ("embedding table kept " +
                                             std::string(ggml_type_name(cw.embedding.type)))
                                                .c_str()
                                          : "embedding table float32",
                        per_token.c_str());
        else
            std::printf("weights: float32; %s read per decode token\n", per_token.c_str());
    }
    const double per_token = static_cast<double>(c.kv_bytes_per_token());
    std::printf(
        "KV cache: 2 x %d layers x %d kv heads x %d head size x 4 B = %s per token, %s "
        "at the session's context of %d (allocated for that, --context sets it)\n",
        c.n_layers, c.n_kv_heads, c.head_dim(), format_bytes(per_token).c_str(),
        format_bytes(per_token * c.seq_len).c_str(), c.seq_len);
    std::printf("opened in %.3f s (wall clock, this run: mapping, checks, any dequantisation)\n",
                open_s);
    std::printf("backend: %s (%s)\n", o.backend.backend->name().c_str(), o.backend.note.c_str());
    return 0;
}

}  // namespace kvs::cli
