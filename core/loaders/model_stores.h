#pragma once
// Models where people already keep them, read offline: the Hugging Face hub cache (what
// transformers, vLLM and `hf download` fill) and Ollama's store. Nothing is downloaded: a model
// not there is one line naming where kvscope looked and the command that gets it.
//
//   ORG/NAME[@REV]      CACHE/models--ORG--NAME/snapshots/COMMIT/, COMMIT read from refs/REV
//                       (REV: main by default, or a commit hash that names the snapshot itself).
//                       CACHE: $HF_HUB_CACHE, else $HF_HOME/hub, else
//                       ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub. The snapshot is a Hugging
//                       Face folder (config.json) or holds one GGUF file.
//   ollama:NAME[:TAG]   STORE/manifests/registry.ollama.ai/library/NAME/TAG (TAG: latest by
//                       default; NAME may be NAMESPACE/NAME or HOST/NAMESPACE/NAME), whose
//                       application/vnd.ollama.image.model layer names the GGUF blob
//                       STORE/blobs/sha256-HEX. STORE: $OLLAMA_MODELS, else ~/.ollama/models,
//                       else /usr/share/ollama/.ollama/models (Linux's service).
#include <string>
#include <vector>

namespace kvs {

// The environment the stores are found through (a test passes its own).
struct StoreEnvironment {
    std::string home, xdg_cache_home, hf_home, hf_hub_cache, ollama_models;
    std::vector<std::string> system_ollama_stores = {"/usr/share/ollama/.ollama/models"};
    static StoreEnvironment from_process();
};

// Whether `spec` is written as a store's model: "ollama:..." or ORG/NAME[@REV] (two names of
// letters, digits, '-', '_', '.', one slash). A path that exists is never asked about.
bool names_store_model(const std::string& spec);

// The file (GGUF) or folder (Hugging Face) `spec` names in its store. Throws kvs::Error of one
// line when it is not there: where it looked, which variable moves the store, and how to get it
// ("hf download ORG/NAME", "ollama pull NAME:TAG").
std::string resolve_store_model(const std::string& spec,
                                const StoreEnvironment& env = StoreEnvironment::from_process());

}  // namespace kvs
