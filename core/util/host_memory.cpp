#include "core/util/host_memory.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/util/error.h"

namespace kvs {

MemoryBudget host_memory_budget(bool holds_kv) {
    MemoryBudget b;
    b.holds_kv = holds_kv;
    if (const char* env = std::getenv("KVSCOPE_MEM_AVAILABLE"); env && *env) {
        char* end = nullptr;
        const unsigned long long v = std::strtoull(env, &end, 10);
        if (*end != '\0' || v == 0)
            throw Error(std::string("KVSCOPE_MEM_AVAILABLE='") + env +
                        "' is not a positive number of bytes");
        b.bytes = v;
        b.source = "KVSCOPE_MEM_AVAILABLE";
        return b;
    }
    std::ifstream f("/proc/meminfo");
    for (std::string line; std::getline(f, line);) {
        std::istringstream in(line);
        std::string key;
        unsigned long long kib = 0;
        if (in >> key >> kib && key == "MemAvailable:") {
            b.bytes = kib * 1024;
            b.source = "MemAvailable in /proc/meminfo";
            break;
        }
    }
    return b;
}

}  // namespace kvs
