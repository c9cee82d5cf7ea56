#pragma once
// The host memory there is for what kvscope allocates: MemAvailable from /proc/meminfo, or
// KVSCOPE_MEM_AVAILABLE (bytes) when set, so tests and users can impose a limit without a cgroup.
// Read by the check before a model loads (core/loaders/memory_budget.h) and by the check of any
// allocation a file's numbers ask for (core/util/checked.h).
#include <cstdint>
#include <string>

namespace kvs {

struct MemoryBudget {
    std::uint64_t bytes = 0;  // available; 0 means unknown, and nothing is checked
    std::string source;       // where the number comes from, in words
    bool holds_kv = true;     // the KV cache lives here too (not on the host of a GPU backend)
};

// bytes 0 when neither can be read.
MemoryBudget host_memory_budget(bool holds_kv = true);

}  // namespace kvs
