#pragma once
// Whether a model fits before it is loaded: its weights (float32, as kvscope computes on them)
// plus the KV cache at the context the session gets (K and V, every layer, float32), against the
// memory there is where they will live: the host's MemAvailable, and a device's free memory when
// the backend copies them there. The context a session gets is the model's own, or less when the
// user chooses (--context N): the KV cache is allocated for that, never for more.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_config.h"
#include "core/util/host_memory.h"

namespace kvs {

class Backend;

struct OpenLimits {
    int context = 0;  // tokens a session may hold: 0 = the model's own context
    std::vector<MemoryBudget> budgets;
};

// The budgets a model opened for `backend` must fit: host memory (holding the KV cache when the
// backend computes on the host), and the device's free memory when it has its own.
std::vector<MemoryBudget> budgets_for(const Backend& backend);

// The context a session gets: min(model's, chosen) when `chosen` > 0. Appends to `note` what was
// cut (", context 256 of the model's 2048 (chosen)").
int session_context(int model_context, int chosen, std::string& note);

// A long-context model's whole-context KV cache may not fit kvscope's bound (kMaxKvCacheBytes), or
// its context kvscope's 131072: the context is then cut to what does, and `note` says so
// (", context cut from 1000000 to 131072 (kvscope's KV cache bound)"). Shapes not yet valid are
// left for ModelConfig::validate to refuse.
void cut_context_to_kv_bound(ModelConfig& c, std::string& note);

// Throws kvs::Error naming `name` when weight_bytes + c's KV cache at c.seq_len exceed a budget:
// "NAME: does not fit: needs 31.0 GiB for weights (30.0 GiB) + KV cache at context 8192
// (1.00 GiB), 16.0 GiB available (MemAvailable in /proc/meminfo); a shorter --context needs less"
// (sizes as core/util/format.h's format_bytes writes them).
void check_fits(const std::string& name, std::uint64_t weight_bytes, const ModelConfig& c,
                const OpenLimits& limits);

}  // namespace kvs
