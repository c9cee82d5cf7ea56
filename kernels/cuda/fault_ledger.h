#pragma once
// How both CUDA backends (the device one and the emulated one) keep and report a device error.
// CUDA reports a kernel's fault late, at the next call that waits for the stream, and from then on
// every call returns it again (a "sticky" error). So:
// - release() never throws (it runs in destructors, also while another error unwinds the stack):
//   its error is kept here;
// - only the first error is kept, and the next synchronize() throws it once, naming where it was
//   seen (the op that faulted when each op is waited for, else the last op queued before the sync);
// - KVSCOPE_CUDA_SYNC=1 makes the backends wait after every op, so the error names the op.
// Host C++ only: no CUDA types, so the emulated backend and its tests use the very same messages.
#include <string>

namespace kvs {

class FaultLedger {
  public:
    FaultLedger();  // sync after every op when the environment has KVSCOPE_CUDA_SYNC=1
    explicit FaultLedger(bool sync_each_op) : sync_each_op_(sync_each_op) {}

    bool sync_each_op() const { return sync_each_op_; }
    // The op most recently queued, named in a fault found by a later sync.
    void queued(const char* op) { last_op_ = op; }

    // A failed call that must not throw (cudaFree in release()): kept for the next report(),
    // with the last op queued (cudaFree waits for the device: the fault may be that op's).
    void keep_call(const char* call, const std::string& error) noexcept;
    // A stream sync returned `error`: with sync_each_op() it names the op just waited for.
    void keep_sync(const std::string& error) noexcept;
    // Throws kvs::Error with the kept error, once; later calls throw nothing.
    void report();

    // An error has been seen (reported or not): the device context is not usable any more.
    bool broken() const { return !first_.empty(); }
    const std::string& first_error() const { return first_; }

  private:
    void keep(std::string message) noexcept;

    bool sync_each_op_ = false;
    std::string last_op_ = "nothing";
    std::string first_;
    bool reported_ = false;
};

}  // namespace kvs
