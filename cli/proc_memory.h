#pragma once
// This process's memory as Linux reports it in /proc/self/status, for `kvscope-cli soak`.
#include <cstddef>

namespace kvs::cli {

struct ProcMemory {
    std::size_t rss_kib = 0;   // VmRSS: resident now
    std::size_t peak_kib = 0;  // VmHWM: the most resident so far
};

// Throws kvs::Error when /proc/self/status cannot be read (not Linux).
ProcMemory read_proc_memory();

}  // namespace kvs::cli
