#include "core/loaders/named_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::size_t kGgufHeaderBytes = 24;  // magic, version, tensor count, metadata count

std::string extension_of(const std::string& path) {
    std::string e = std::filesystem::path(path).extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
    return e;
}

// The first bytes as a message may quote them: printable ASCII as is, others as \xNN.
std::string quoted_start(const std::vector<unsigned char>& head) {
    std::string s;
    for (unsigned char c : head) {
        char buf[8];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            s += char(c);
        } else {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            s += buf;
        }
    }
    return "\"" + s + "\"";
}

}  // namespace

bool model_file_is_gguf(const std::string& path) {
    const std::uintmax_t size = regular_file_size(path);  // a folder, device or missing file
    const auto head = read_file_head(path, 4);
    if (head.size() == 4 && std::equal(head.begin(), head.end(), "GGUF")) return true;
    const std::string ext = extension_of(path);
    // Shorter than a GGUF header is shorter than a llama2.c checkpoint's (28 bytes) too.
    if (ext == ".gguf" && size < kGgufHeaderBytes)
        refuse_too_short(path, size, "a GGUF header", kGgufHeaderBytes);
    if (ext == ".json")
        throw Error(path +
                    ": a JSON file, not a model: give a llama2.c .bin, a .gguf file or a Hugging "
                    "Face model folder (one with config.json); a trace opens with replay");
    if (ext == ".model")
        throw Error(path +
                    ": a SentencePiece tokenizer.model, not a model: it goes in a Hugging Face "
                    "model folder, or with --tokenizer");
    return false;
}

void refuse_misnamed(const std::string& path, const std::string& why) {
    if (extension_of(path) != ".gguf") return;
    std::string_view reason = why;
    if (reason.starts_with(path + ": ")) reason.remove_prefix(path.size() + 2);
    throw Error(path + ": named as a GGUF file, but it starts with " +
                quoted_start(read_file_head(path, 4)) +
                ", not \"GGUF\"; as a llama2.c checkpoint: " + std::string(reason));
}

void check_tokenizer_name(const std::string& path, bool hf) {
    regular_file_size(path);  // a folder, device or missing file is said so first
    const std::string ext = extension_of(path);
    if (ext == ".gguf")
        throw Error(path + ": a GGUF file as the tokenizer: a GGUF model carries its own; give " +
                    "it with --model");
    if (!hf && (ext == ".json" || ext == ".model"))
        throw Error(path + ": a Hugging Face tokenizer (" + ext +
                    "), which kvscope reads with a Hugging Face model folder; a llama2.c "
                    "checkpoint takes a llama2.c tokenizer .bin");
}

}  // namespace kvs
