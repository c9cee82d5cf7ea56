#include "cmdline/foreign_options.h"

#include <algorithm>
#include <cctype>

namespace kvs::cmdline {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The value as the equivalent option would take it, or a placeholder when none was given.
std::string or_placeholder(const std::string& v, const char* placeholder) {
    return v.empty() ? placeholder : v;
}

std::string gpu_layers(const std::string&) {
    return "kvscope runs every layer on one backend: --backend cuda puts them all on the GPU, "
           "--backend cpu none";
}

std::string device(const std::string& v) {
    const std::string d = lower(v);
    // transformers and vLLM say cuda, cuda:0 or cpu; llama.cpp's --device names CUDA0.
    if (d.rfind("cuda", 0) == 0 || d.rfind("gpu", 0) == 0)
        return "kvscope's name is --backend cuda (one device, the first)";
    if (d == "cpu") return "kvscope's name is --backend cpu";
    return "kvscope's name is --backend B (auto, cpu, cuda or cuda-emulated)";
}

std::string dtype(const std::string& v) {
    const std::string d = lower(v);
    std::string w;
    if (d == "float16" || d == "half" || d == "fp16" || d == "f16" || d == "torch.float16")
        w = "f16";
    if (d == "bfloat16" || d == "bf16" || d == "torch.bfloat16") w = "bf16";
    if (d == "float32" || d == "float" || d == "fp32" || d == "f32" || d == "torch.float32")
        w = "f32";
    if (d == "auto")
        return "kvscope keeps the weights as the file stores them unless --weights W asks";
    return "kvscope's name is --weights " + (w.empty() ? std::string("W") : w) +
           " (the type the weight matrices are kept in: f32, f16, bf16, q8_0, q4_0, q2_k..q6_k)";
}

std::string max_tokens(const std::string& v) {
    return "kvscope's name is -n " + or_placeholder(v, "N") + " (--max-new-tokens)";
}

std::string do_sample(const std::string&) {
    return "kvscope samples when the temperature is above 0: --temp 0.8 (the default, 0, is "
           "greedy)";
}

std::string max_model_len(const std::string& v) {
    return "kvscope's name is -c " + or_placeholder(v, "N") +
           " (--context: tokens a session may hold)";
}

std::string tensor_parallel(const std::string&) {
    return "kvscope runs on one device (--backend cuda or cpu)";
}

std::string memory_share(const std::string&) {
    return "kvscope allocates the KV cache for the context (-c N); serve's pool is --pool-blocks N";
}

std::string conversation(const std::string&) {
    return "kvscope-cli has no chat mode: generate runs one prompt (-p TEXT), as llama-cli -no-cnv "
           "does";
}

const std::vector<ForeignOption> kForeign = {
    {{"-ngl", "--n-gpu-layers", "--gpu-layers"}, true, gpu_layers},
    {{"--device", "-dev"}, true, device},
    {{"--dtype", "--torch_dtype", "--torch-dtype"}, true, dtype},
    {{"--max-tokens", "--max_tokens", "--max_new_tokens"}, true, max_tokens},
    {{"--do_sample", "--do-sample"}, false, do_sample},
    {{"--max-model-len", "--max_model_len"}, true, max_model_len},
    {{"--tensor-parallel-size", "-tp"}, true, tensor_parallel},
    {{"--gpu-memory-utilization"}, true, memory_share},
    {{"-cnv", "--conversation", "-i", "--interactive", "-if", "--interactive-first"},
     false,
     conversation},
    // llama-cli's way to turn chat off: kvscope-cli never chats, so it is understood and dropped.
    {{"-no-cnv", "--no-conversation"}, false, nullptr},
};

}  // namespace

const std::vector<ForeignOption>& foreign_options() {
    return kForeign;
}

const ForeignOption* find_foreign_option(const std::string& arg) {
    const std::string name = arg.substr(0, arg.find('='));
    for (const auto& f : kForeign)
        if (std::find(f.spellings.begin(), f.spellings.end(), name) != f.spellings.end()) return &f;
    return nullptr;
}

std::string foreign_command_answer(const std::string& command) {
    if (command == "run" || command == "chat" || command == "complete" || command == "infer")
        return "kvscope-cli has no chat mode; generate runs one prompt: kvscope-cli generate -m "
               "MODEL -p TEXT -n N, or as llama-cli is typed, kvscope-cli -m MODEL -p TEXT -n N";
    if (command == "pull" || command == "download")
        return "kvscope-cli reads models already on this machine (hf download ORG/NAME, ollama "
               "pull "
               "NAME), then --model ORG/NAME or --model ollama:NAME";
    return {};
}

}  // namespace kvs::cmdline
