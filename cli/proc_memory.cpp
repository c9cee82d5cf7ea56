#include "cli/proc_memory.h"

#include <fstream>
#include <sstream>
#include <string>

#include "core/util/error.h"

namespace kvs::cli {

ProcMemory read_proc_memory() {
    std::ifstream f("/proc/self/status");
    if (!f)
        throw Error(
            "/proc/self/status: cannot read it (resident memory is read from Linux's /proc)");
    ProcMemory m;
    bool rss = false, hwm = false;
    std::string line;
    while (std::getline(f, line)) {
        // "VmRSS:\t   12345 kB"
        std::istringstream s(line);
        std::string key;
        std::size_t kib = 0;
        s >> key >> kib;
        if (key == "VmRSS:") m.rss_kib = kib, rss = true;
        if (key == "VmHWM:") m.peak_kib = kib, hwm = true;
    }
    if (!rss || !hwm) throw Error("/proc/self/status: no VmRSS/VmHWM lines");
    return m;
}

}  // namespace kvs::cli
