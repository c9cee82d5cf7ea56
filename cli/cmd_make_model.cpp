// make-model: a random-weight llama2.c checkpoint of a given shape, and a tokenizer beside it, for
// tests and figures at sizes that are not committed (an 85M-parameter model is 340 MB); or, with
// --arch gpt2, a GPT-2-shaped model as one GGUF file (architecture gpt2, its tokenizer inside).
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "core/files/gguf_file.h"
#include "core/loaders/checkpoint.h"
#include "core/loaders/checkpoint_writer.h"
#include "core/loaders/gguf_writer.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/output_file.h"

namespace kvs::cli {
namespace {

// Named shapes: "85M" is the llama2.c-shaped model of docs/bench's CPU figures (dim 768, 12
// layers); "1GB" the 1 GB file of the load and memory figures there. vocab 512 keeps the tokenizer
// small; the weights dominate either way.
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

// The byte-level tokenizer both architectures get, `vocab` pieces.
std::vector<unsigned char> tokenizer_bytes(int vocab) {
    return tokenizer_file_bytes({" ", "e", " t", "he", " the", "a", " a"}, vocab);
}

// --arch gpt2: random GPT-2 weights (core/loaders/checkpoint_writer.h) and the tokenizer, as one
// GGUF.
void write_gpt2(const std::string& out, const ModelConfig& c, std::uint64_t seed) {
    check_output_path(out, gguf_output());  // before the weights are drawn
    auto all = std::make_shared<std::vector<float>>(random_gpt2_weights(c, seed));
    LlamaWeights w;
    point_llama_weights(w, all->data(), c, false);
    const auto bytes = tokenizer_bytes(c.vocab_size);
    const BpeTokenizer tok = BpeTokenizer::parse(bytes.data(), bytes.size(), c.vocab_size, out);
    write_gguf_llama(out, c, w, tok, GgmlType::F32, "kvscope random gpt2");
}

}  // namespace

std::vector<OptionSpec> make_model_options() {
    using cmdline::whole_in;
    return {
        {"out", "FILE.bin", "checkpoint to write; FILE.tok.bin goes beside it (gpt2: FILE.gguf)"},
        {.name = "arch",
         .value_name = "NAME",
         .help = "(default llama)",
         .value = cmdline::one_of({"llama", "gpt2"})},
        {.name = "shape",
         .value_name = "NAME",
         .help = "(default 85M); the options below override",
         .value = cmdline::one_of({"85M", "1GB", "small"})},
        {.name = "dim", .value_name = "N", .help = "residual width", .value = whole_in(1, 1 << 16)},
        {.name = "hidden",
         .value_name = "N",
         .help = "MLP inner width (default for gpt2: 4 x dim)",
         .value = whole_in(1, 1 << 18)},
        {.name = "layers", .value_name = "N", .help = "layers", .value = whole_in(1, 1024)},
        {.name = "heads", .value_name = "N", .help = "query heads", .value = whole_in(1, 1024)},
        {.name = "kv-heads",
         .value_name = "N",
         .help = "key/value heads (default: heads)",
         .value = whole_in(1, 1024)},
        {.name = "vocab",
         .value_name = "N",
         .help = "vocabulary (from 259: the byte pieces)",
         .value = whole_in(259, 1 << 20)},
        {.name = "context",
         .value_name = "N",
         .help = "context length",
         .aliases = {"-c", "--ctx-size", "--seq-len"},
         .value = whole_in(1, 1 << 20)},
        {.name = "seed",
         .value_name = "S",
         .help = "weights' random seed (default 1)",
         .aliases = {"-s"},
         .value = cmdline::any_unsigned()}};
}

int cmd_make_model(int argc, char** argv) {
    const Args a("make-model", make_model_options(), argc, argv, 2);
    if (a.help()) {
        std::fputs(
            "Write a llama2.c checkpoint with random weights (uniform, scale 1/sqrt(dim)) "
            "and a byte-level tokenizer beside it; with --arch gpt2, a GPT-2-shaped model "
            "(LayerNorm gains 1, biases 0) as one GGUF file, the tokenizer inside.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (!a.has("out")) throw Error("make-model: --out FILE.bin is required");
    const std::string arch = a.checked("arch", "llama");
    // The file's name says what is in it: a GPT-2 model is a GGUF file, a Llama one a llama2.c
    // checkpoint (kvscope-cli export --gguf makes a GGUF of it).
    const std::filesystem::path named(a.str("out"));
    if (arch == "gpt2" && named.extension() != ".gguf")
        a.fail("--arch gpt2 writes a GGUF file: name it " +
               (named.parent_path() / (named.stem().string() + ".gguf")).string());
    if (arch == "llama" && named.extension() == ".gguf")
        a.fail(
            "--arch llama writes a llama2.c checkpoint: name it .bin (kvscope-cli export "
            "--gguf converts one to GGUF)");
    ModelConfig c = preset(a.checked("shape", "85M"));
    c.dim = a.integer("dim", c.dim);
    if (arch == "gpt2") {  // GPT-2's design: a 4 x dim MLP, every K/V head its own
        c.arch = Architecture::Gpt2;
        c.hidden_dim = 4 * c.dim;
        c.qkv_bias = true;
    }
    c.hidden_dim = a.integer("hidden", c.hidden_dim);
    c.n_layers = a.integer("layers", c.n_layers);
    c.n_heads = a.integer("heads", c.n_heads);
    c.n_kv_heads = a.integer("kv-heads", a.has("heads") ? c.n_heads : c.n_kv_heads);
    c.vocab_size = a.integer("vocab", c.vocab_size);
    c.seq_len = a.integer("context", c.seq_len);
    const std::uint64_t seed = a.unsigned_integer("seed", 1);
    if (c.gpt2()) {
        if (c.n_kv_heads != c.n_heads)
            throw Error("make-model: --kv-heads: GPT-2 has as many key/value heads as heads");
        c.n_positions = c.seq_len;
        const std::string out = a.str("out");
        write_gpt2(out, c, seed);
        std::printf("%s: %s, %zu parameters, GGUF gpt2 (float32, tokenizer inside, %d pieces)\n",
                    out.c_str(), c.describe().c_str(), c.parameter_count(), c.vocab_size);
        return 0;
    }

    const std::filesystem::path out(a.str("out"));
    const auto tok = out.parent_path() / (out.stem().string() + ".tok.bin");
    // Both files checked before either is written: a refused tokenizer must not leave a new
    // checkpoint beside an old one.
    check_output_path(out.string(), checkpoint_output());
    check_output_path(tok.string(), tokenizer_bin_output());
    write_random_checkpoint(out.string(), c, seed);
    const auto bytes = tokenizer_bytes(c.vocab_size);
    write_output_file(tok.string(),
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                      tokenizer_bin_output());
    std::printf("%s: %s, %zu parameters, %s\n%s: tokenizer, %d pieces\n", out.string().c_str(),
                c.describe().c_str(), c.parameter_count(),
                format_bytes(28.0 + 4.0 * c.stored_floats()).c_str(), tok.string().c_str(),
                c.vocab_size);
    return 0;
}

}  // namespace kvs::cli
