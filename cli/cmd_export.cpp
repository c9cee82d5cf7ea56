// export: a llama2.c model (checkpoint + tokenizer.bin) written as a GGUF v3 `llama` file that
// llama.cpp reads, its matrices in F32, F16, BF16, Q8_0, Q4_0 or a K-quant
// (core/loaders/gguf_writer.h), or as a Hugging Face LlamaForCausalLM folder of safetensors
// (core/loaders/hf_writer.h). A model with q/k/v biases is written as qwen2 / Qwen2ForCausalLM, a
// GPT-2 one (say, a Hugging Face folder with tokenizer.bin that an export wrote) as gpt2 /
// GPT2LMHeadModel.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "core/loaders/checkpoint.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/format.h"
#include "core/util/output_file.h"
#include "core/util/utf8.h"

namespace kvs::cli {

namespace {

// "Q8_0 matrices", or where some rows were not whole blocks of the type asked "Q8_0 x 31, F16 x
// 5 matrices (Q5_K asked; rows of 64, 172 values are not whole 256-value blocks of it)": the
// types the file holds, as `info` reads them back.
std::string written_matrices(const std::vector<WrittenMatrix>& ms, GgmlType asked) {
    std::vector<GgmlType> types;
    std::vector<std::uint64_t> short_rows;  // row lengths that fell back, each once
    for (const WrittenMatrix& m : ms) {
        types.push_back(m.type);
        if (m.type != asked &&
            std::find(short_rows.begin(), short_rows.end(), m.row) == short_rows.end())
            short_rows.push_back(m.row);
    }
    if (short_rows.empty()) return std::string(ggml_type_name(asked)) + " matrices";
    std::sort(short_rows.begin(), short_rows.end());
    std::string rows;
    for (const auto n : short_rows) rows += (rows.empty() ? "" : ", ") + std::to_string(n);
    return ggml_type_counts(types) + " matrices (" + ggml_type_name(asked) + " asked; rows of " +
           rows + " values are not whole " + std::to_string(ggml_block_elements(asked)) +
           "-value blocks of it)";
}

std::string export_type_problem(const std::string& name) {
    try {
        ggml_type_from_name(name);
        return {};
    } catch (const Error&) {
    }
    std::string list;
    for (const auto& n : encodable_type_names()) list += (list.empty() ? "" : ", ") + n;
    return "'" + name + "' is not one of " + list + " (--hf: f32, f16, bf16)";
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : " | ") + n;
    return s;
}

}  // namespace

std::vector<OptionSpec> export_options() {
    OptionSpec model = cmdline::model_option();
    model.help = "default | stories260K | a llama2.c checkpoint";
    return {model,
            {"tokenizer", "FILE", "its tokenizer.bin (default: found beside it)"},
            {"gguf", "FILE.gguf", "the GGUF file to write"},
            {"hf", "FOLDER", "or a Hugging Face folder to write (config.json, safetensors)"},
            {.name = "shard-mb",
             .value_name = "N",
             .help = "--hf: safetensors shards of at most N MB (0, the default: one\nfile)",
             .value = cmdline::whole_in(0, 1 << 20)},
            {.name = "type",
             .value_name = "T",
             .help = "the matrices' type (default f32; --hf: f32, f16 or bf16)",
             .value = cmdline::checked_by(export_type_problem, joined(encodable_type_names()))}};
}

int cmd_export(int argc, char** argv) {
    const Args a = model_args("export", export_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Write a llama2.c model as a GGUF v3 file (architecture llama) for llama.cpp and for "
            "kvscope's own --model. Norms stay F32; a matrix whose rows are not whole blocks of "
            "the type falls back (a K-quant to Q4_0 or Q8_0, then F16), and the summary names "
            "every type written. Or, with --hf, as a Hugging Face LlamaForCausalLM folder (every "
            "tensor f32, f16 or bf16; q/k rows in HF's "
            "rotate-half order; tokenizer.bin beside).\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    if (a.has("gguf") == a.has("hf"))
        throw Error("export: one of --gguf FILE.gguf and --hf FOLDER is required");
    const GgmlType type = ggml_type_from_name(a.checked("type", "f32"));
    const int shard_mb = a.integer("shard-mb", 0);
    if (shard_mb && !a.has("hf")) throw Error("export: --shard-mb goes with --hf");
    // Every weight as float32: the writers read the float views (a GGUF kept compact has none).
    const auto m = open_model(a.str("model", "default"), a.str("tokenizer", ""), GgmlType::F32);
    const auto* tok = dynamic_cast<const BpeTokenizer*>(&m->tokenizer());
    const auto* llama = dynamic_cast<const TransformerModel*>(m.get());
    if (!tok || !llama)
        throw Error("export: --model must be a llama2.c checkpoint with its tokenizer.bin (" +
                    m->name() + " is not)");
    // What the writers make of the model's shapes (core/loaders/gguf_writer.h,
    // core/loaders/hf_writer.h).
    const ModelConfig& c = llama->config();
    const bool qwen2 = !c.gpt2() && c.qkv_bias;
    const auto t0 = std::chrono::steady_clock::now();
    if (a.has("hf")) {
        write_hf_llama(a.str("hf"), c, llama->weights(), *tok, type, std::uint64_t(shard_mb) << 20);
        std::printf("%s: Hugging Face %s, %s tensors, written in %.2f s\n", a.str("hf").c_str(),
                    c.gpt2() ? "GPT2LMHeadModel"
                    : qwen2  ? "Qwen2ForCausalLM"
                             : "LlamaForCausalLM",
                    ggml_type_name(type),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return 0;
    }
    const std::string out = a.str("gguf");
    const GgufWritten w = write_gguf_llama(out, c, llama->weights(), *tok, type, m->name());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const char* arch = c.gpt2() ? "gpt2" : qwen2 ? "qwen2" : "llama";
    // Every byte was written and checked. A regular file's size is read back; on a device or a
    // pipe there is nothing to read back, and the summary says so. When the output is this
    // process's own stdout (/dev/stdout, a pipe to the next command), the summary goes to stderr,
    // not into the GGUF bytes.
    const std::string size = w.regular ? format_bytes(double(regular_file_size(out)))
                                       : format_bytes(double(w.bytes)) +
                                             " to a device or pipe (all written; its size there "
                                             "cannot be read back)";
    std::fprintf(is_standard_output(out) ? stderr : stdout,
                 "%s: GGUF v3, %s, %s, %s, written in %.2f s\n", escape_for_one_line(out).c_str(),
                 arch, written_matrices(w.matrices, type).c_str(), size.c_str(), s);
    return 0;
}

}  // namespace kvs::cli
