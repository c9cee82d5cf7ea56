// make-model: a random-weight llama2.c checkpoint of a given shape, and a tokenizer beside it, for
// tests and figures at sizes that are not committed (an 85M-parameter model is 340 MB).
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "core/checkpoint_writer.h"
#include "core/error.h"
#include "core/format.h"
#include "core/output_file.h"

namespace kvs::cli {
namespace {

// Named shapes: "85M" is the llama2.c-shaped model of issue 17's figures; "1GB" the 1 GB file of
// issue 15's load test. vocab 512 keeps the tokenizer small; the weights dominate either way.
ModelConfig preset(const std::string& name) {
    ModelConfig c;
    c.vocab_size = 512;
    c.seq_len = 1024;
    if (name == "85M") {
        c.dim = 768, c.hidden_dim = 2048, c.n_layers = 12, c.n_heads = 12, c.n_kv_heads = 12;
    } else if (name == "1GB") {
        c.dim = 1536, c.hidden_dim = 4096, c.n_layers = 9, c.n_heads = 12, c.n_kv_heads = 12;
    } else if (name == "small") {
        c.dim = 288, c.hidden_dim = 768, c.n_layers = 6, c.n_heads = 6, c.n_kv_heads = 6;
        c.seq_len = 256;
    } else {
        throw Error("make-model: --shape: '" + name + "' is not one of 85M, 1GB, small");
    }
    return c;
}

}  // namespace

int cmd_make_model(int argc, char** argv) {
    Args a("make-model",
           {{"out", "FILE.bin", "checkpoint to write; FILE.tok.bin goes beside it"},
            {"shape", "NAME", "85M | 1GB | small (default 85M); flags below override"},
            {"dim", "N", "residual width"},
            {"hidden", "N", "SwiGLU inner width"},
            {"layers", "N", "layers"},
            {"heads", "N", "query heads"},
            {"kv-heads", "N", "key/value heads (default: heads)"},
            {"vocab", "N", "vocabulary (>= 259: the byte pieces)"},
            {"seq-len", "N", "context length"},
            {"seed", "S", "weights' random seed (default 1)"}},
           argc, argv, 2);
    if (a.help()) {
        std::fputs(
            "Write a llama2.c checkpoint with random weights (uniform, scale 1/sqrt(dim)) "
            "and a byte-level tokenizer beside it.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (!a.has("out")) throw Error("make-model: --out FILE.bin is required");
    ModelConfig c = preset(a.str("shape", "85M"));
    c.dim = a.integer("dim", c.dim, 1, 1 << 16);
    c.hidden_dim = a.integer("hidden", c.hidden_dim, 1, 1 << 18);
    c.n_layers = a.integer("layers", c.n_layers, 1, 1024);
    c.n_heads = a.integer("heads", c.n_heads, 1, 1024);
    c.n_kv_heads = a.integer("kv-heads", a.has("heads") ? c.n_heads : c.n_kv_heads, 1, 1024);
    c.vocab_size = a.integer("vocab", c.vocab_size, 259, 1 << 20);
    c.seq_len = a.integer("seq-len", c.seq_len, 1, 1 << 20);
    const std::uint64_t seed = a.unsigned_integer("seed", 1);

    const std::filesystem::path out(a.str("out"));
    const auto tok = out.parent_path() / (out.stem().string() + ".tok.bin");
    check_output_path(tok.string());
    write_random_checkpoint(out.string(), c, seed);
    const auto bytes =
        tokenizer_file_bytes({" ", "e", " t", "he", " the", "a", " a"}, c.vocab_size);
    write_output_file(tok.string(),
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    std::printf("%s: %s, %zu parameters, %s\n%s: tokenizer, %d pieces\n", out.string().c_str(),
                c.describe().c_str(), c.parameter_count(),
                format_bytes(28.0 + 4.0 * c.stored_floats()).c_str(), tok.string().c_str(),
                c.vocab_size);
    return 0;
}

}  // namespace kvs::cli
