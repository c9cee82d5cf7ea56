#pragma once
// The llama family's own steps of the loader pipeline (core/loaders/arch_table.h): Qwen2's table
// is a copy of llama's with its differences (core/loaders/arch_qwen2.cpp), these steps among what
// it keeps.
#include <nlohmann/json.hpp>
#include <string>

#include "core/loaders/arch_table.h"

namespace kvs {

void llama_hf_refusals(const nlohmann::json& j, const Refuse& fail);
void llama_hf_shapes(const nlohmann::json& j, ModelConfig& c, const Refuse& fail);
void llama_hf_checked(const nlohmann::json& j, ModelConfig& c, const Refuse& fail,
                      const std::string& name);
void llama_gguf_shapes(const GgufFile& f, const std::string& key, ModelConfig& c,
                       const Refuse& fail);
void llama_gguf_checked(const GgufFile& f, const std::string& key, const ModelConfig& c,
                        const Refuse& fail);
void llama_hf_write(const ModelConfig& c, nlohmann::ordered_json& config);

}  // namespace kvs
