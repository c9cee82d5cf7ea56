#pragma once
// An architecture's tensor table (core/loaders/arch_table.h) spelled out for one model's shapes and
// one file format: every tensor's name, its dimensions as the file states them and, given the
// weights, where its values go. The loader pipeline checks a file against this list and copies
// through it; the writers write it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/loaders/arch_table.h"

namespace kvs {

enum class FileFormat : std::uint8_t { gguf, hf };

struct TensorSlot {
    std::string name;                 // as the file names it (HF: without ArchTable::hf_prefix)
    std::vector<std::uint64_t> dims;  // as the file states them
    const TensorRow* row = nullptr;
    int layer = -1;                 // -1: one for the model
    std::uint64_t rows = 0, n = 0;  // our [out, in]: rows of n values (a vector: n is 1)
    bool rope_rows = false;         // the file's rows in the rotate-half order
    bool conv1d = false;            // the file's matrix [in, out] (HF's Conv1D)
    std::vector<const float*> to;   // each part's place in the weights (when weights are given)
    std::uint64_t elements() const { return rows * n; }
};

// Every tensor of a model of shapes `c` in `format`, in the order the file holds them. The
// classifier is left out when it is the embedding table.
std::vector<TensorSlot> tensor_slots(const ArchTable& t, const ModelConfig& c, FileFormat format,
                                     const LlamaWeights* w = nullptr);

// A slot's values in our order ([out, in] rows, q/k rows in llama2.c's adjacent pairs, parts one
// after the other) from the file's order, or (`to_file`) back.
void reorder_values(const TensorSlot& s, const float* from, float* to, std::size_t head_dim,
                    bool to_file);

}  // namespace kvs
