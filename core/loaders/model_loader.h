#pragma once
// Finding and opening models by name or path. Names: "default" (our embedded model in assets/),
// "toy" (the tutorials' four hand-made heads), "stories260K" (../shared/models when present),
// ORG/NAME[@REV] and ollama:NAME[:TAG] (the Hugging Face cache, Ollama's store:
// core/loaders/model_stores.h) when no such path exists; anything else is a path: a Hugging Face
// folder (config.json + safetensors,
// core/loaders/hf_llama.h), a GGUF file (by its magic, see core/loaders/gguf_llama.h) or a llama2.c
// checkpoint.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/loaders/memory_budget.h"
#include "core/model/compact_weights.h"
#include "core/model/model.h"

namespace kvs {

// Opens `spec`; `tokenizer` empty means: look beside the checkpoint. `weights` (--weights,
// core/model/compact_weights.h): none keeps a GGUF's matrices in the file's own types, used in
// place (other formats are read as float32); F32 expands them; another type keeps every matrix in
// that type: a GGUF's tensors of that type are used as they are, anything else is converted on
// load. Throws kvs::Error, also when the weights (as kept) and the KV cache at the chosen context
// do not fit `limits`' budgets (checked before any weight is read). Without limits: the model's own
// context, host memory (core/loaders/memory_budget.h's host_memory_budget).
std::unique_ptr<Model> open_model(const std::string& spec, const std::string& tokenizer = {},
                                  WeightsWanted weights = std::nullopt);
std::unique_ptr<Model> open_model(const std::string& spec, const std::string& tokenizer,
                                  const OpenLimits& limits, WeightsWanted weights = std::nullopt);

// The tokenizer beside a checkpoint: STEM.tok.bin, tokenizer.bin, or the only tok*.bin there.
std::optional<std::string> find_tokenizer_beside(const std::string& checkpoint);

// Where the default model lives; empty when it cannot be found.
std::string default_model_path();
// stories260K.bin when a ../shared/models (from the working directory or the source tree) has it.
std::string stories260k_path();

// The file or folder `spec` opens (a name or a store's model resolved; "" for the toy, which has
// none, and for a named model not found); throws kvs::Error for a store's model not there.
std::string model_path_of(const std::string& spec);

// Names the app offers in its model menu that resolve on this machine.
std::vector<std::string> available_model_names();

}  // namespace kvs
