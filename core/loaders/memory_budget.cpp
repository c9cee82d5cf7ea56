#include "core/loaders/memory_budget.h"

#include <algorithm>

#include "core/model/backend.h"
#include "core/util/error.h"
#include "core/util/format.h"

namespace kvs {
namespace {

std::string size(std::uint64_t bytes) {
    return format_bytes(static_cast<double>(bytes));
}

}  // namespace

std::vector<MemoryBudget> budgets_for(const Backend& backend) {
    const std::uint64_t device_free = backend.device_free_bytes();
    std::vector<MemoryBudget> out{host_memory_budget(device_free == 0)};
    if (device_free > 0) out.push_back({device_free, "free on " + backend.device(), true});
    return out;
}

int session_context(int model_context, int chosen, std::string& note) {
    if (chosen <= 0 || chosen >= model_context) return model_context;
    note += ", context " + std::to_string(chosen) + " of the model's " +
            std::to_string(model_context) + " (chosen)";
    return chosen;
}

void cut_context_to_kv_bound(ModelConfig& c, std::string& note) {
    constexpr std::size_t kMaxContext = 1 << 17;  // ModelConfig::validate's bound
    if (c.n_layers <= 0 || c.n_kv_heads <= 0 || c.n_heads <= 0 || c.dim < c.n_heads ||
        c.seq_len <= 0)
        return;
    const std::uint64_t per_token = c.kv_bytes_per_token(sizeof(float));
    const std::uint64_t fits = std::min<std::uint64_t>(
        per_token ? ModelConfig::kMaxKvCacheBytes / per_token : 0, kMaxContext);
    if (fits >= 1 && static_cast<std::uint64_t>(c.seq_len) > fits) {
        note = ", context cut from " + std::to_string(c.seq_len) + " to " + std::to_string(fits) +
               " (kvscope's KV cache bound)";
        c.seq_len = static_cast<int>(fits);
    }
}

void check_fits(const std::string& name, std::uint64_t weight_bytes, const ModelConfig& c,
                const OpenLimits& limits) {
    const std::uint64_t kv = std::uint64_t(c.kv_bytes_per_token()) * std::uint64_t(c.seq_len);
    for (const MemoryBudget& b : limits.budgets) {
        const std::uint64_t need = weight_bytes + (b.holds_kv ? kv : 0);
        if (b.bytes == 0 || need <= b.bytes) continue;
        std::string what = "needs " + size(need) + " for weights (" + size(weight_bytes) + ")";
        if (b.holds_kv)
            what += " + KV cache at context " + std::to_string(c.seq_len) + " (" + size(kv) + ")";
        throw Error(name + ": does not fit: " + what + ", " + size(b.bytes) + " available (" +
                    b.source + ")" +
                    (b.holds_kv && c.seq_len > 1 && weight_bytes < b.bytes
                         ? "; a shorter --context needs less"
                         : ""));
    }
}

}  // namespace kvs
