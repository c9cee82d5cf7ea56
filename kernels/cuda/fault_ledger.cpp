#include "kernels/cuda/fault_ledger.h"

#include <cstdlib>
#include <cstring>

#include "core/util/error.h"

namespace kvs {

FaultLedger::FaultLedger() {
    const char* v = std::getenv("KVSCOPE_CUDA_SYNC");
    sync_each_op_ = v && std::strcmp(v, "1") == 0;
}

void FaultLedger::keep(std::string message) noexcept {
    if (first_.empty()) first_ = std::move(message);
}

void FaultLedger::keep_call(const char* call, const std::string& error) noexcept {
    try {
        // cudaFree waits for the device, so it is often the first to see a queued kernel's fault:
        // say what was queued last, as a sync does.
        if (sync_each_op_ || last_op_ == "nothing")
            keep(std::string("CUDA error in ") + call + ": " + error);
        else
            keep(std::string("CUDA error in ") + call + ", after " + last_op_ +
                 " was queued (KVSCOPE_CUDA_SYNC=1 names the op that faulted): " + error);
    } catch (...) {  // out of memory while building the message: nothing better to keep
    }
}

void FaultLedger::keep_sync(const std::string& error) noexcept {
    try {
        if (sync_each_op_)
            keep("CUDA error in " + last_op_ +
                 " (KVSCOPE_CUDA_SYNC=1 waited after each op): " + error);
        else
            keep("CUDA error found at a stream sync, after " + last_op_ +
                 " was queued (KVSCOPE_CUDA_SYNC=1 names the op that faulted): " + error);
    } catch (...) {
    }
}

void FaultLedger::report() {
    if (first_.empty() || reported_) return;
    reported_ = true;
    throw Error(first_);
}

}  // namespace kvs
