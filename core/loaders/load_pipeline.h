#pragma once
// The one loader pipeline for GGUF files and Hugging Face folders, read through the model's
// architecture table (core/loaders/arch_table.h): metadata -> ModelConfig -> the session's context
// -> the KV cache's bound -> validated shapes -> every tensor checked against the table (names,
// shapes, nothing unknown) -> the weights and the KV cache checked against the memory budgets ->
// the weights copied into float32 or kept compact. Everything is checked before a tensor's bytes
// are read; every refusal is one line naming the file.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/loaders/arch_table.h"
#include "core/loaders/memory_budget.h"
#include "core/loaders/tensor_slots.h"

namespace kvs {

// The hyper-parameters of a GGUF file (keys "<arch>.*", the vocabulary from token_embd's rows) or
// of config.json, with the context cut to limits.context and to the KV cache's bound (`note` says
// so), validated.
ModelConfig gguf_config(const ArchTable& t, const GgufFile& f, const OpenLimits& limits,
                        std::string& note, const Refuse& fail);
ModelConfig hf_config(const ArchTable& t, const nlohmann::json& j, const OpenLimits& limits,
                      std::string& note, const Refuse& fail, const std::string& name);

// A tensor as a file holds it.
struct FileTensor {
    std::string name;
    GgmlType type = GgmlType::F32;
    const unsigned char* data = nullptr;  // checked by the container's parser
    std::vector<std::uint64_t> dims;      // as the file states them
    std::uint64_t elements = 0, bytes = 0;
};

// What load_tensors gives: the model, its file's tensor types counted ("F32" -> 11), and how many
// tensors the compact matrices use in place.
struct LoadedTensors {
    Checkpoint ck;
    std::map<std::string, int> type_counts;
    std::size_t in_place = 0;
};

struct TensorLoad {
    FileFormat format;
    const std::vector<FileTensor>* files;  // in the order an unknown one is looked for
    WeightsWanted weights;                 // nullopt: matrices as stored
    std::shared_ptr<const void> keep;      // holds the files' bytes for compact matrices
    std::function<void(const unsigned char*, std::size_t)> done_with;  // a tensor copied
    OpenLimits limits;
    std::string name;
};

// Checks the files' tensors against the table for shapes `c`, the memory against the budgets, and
// copies (or keeps) the weights. Calls done_with with each tensor's bytes once they are copied,
// unless compact matrices point into them.
LoadedTensors load_tensors(const ArchTable& t, const ModelConfig& c, const TensorLoad& in,
                           const Refuse& fail);

// " 11 F32 35 Q8_0": the counts, as the format line lists them.
std::string type_counts_text(const std::map<std::string, int>& counts);

}  // namespace kvs
