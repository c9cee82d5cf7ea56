#pragma once
// Threads for the CPU ops that never cost more than the calling thread alone would.
//
// A job is n items (output row ranges, attention rows). The caller works on the job too, and every
// thread claims one item at a time from a shared counter; when the caller runs out of items it
// waits only for items a worker has already claimed. So a worker that the OS has not scheduled
// (a busy machine: 2 cores, 8 compilers) is not waited for: the caller does its items, and the
// job costs what one thread costs. Which thread computes an item never changes its arithmetic,
// so results are the same bits on any number of threads.
//
// Workers spin briefly after a job (a decode step's ops come back to back, and waking a sleeping
// thread costs tens of microseconds), then sleep on a condition variable.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kvs::cpu {

class ThreadPool {
  public:
    explicit ThreadPool(int threads);  // threads - 1 workers are started; 1 starts none
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threads() const { return static_cast<int>(workers_.size()) + 1; }
    // Calls item(i, slot) for every i in [0, n), each exactly once, and returns when all are
    // done. slot in [0, threads()) names the thread (the caller is 0), for per-thread scratch.
    void run(int n, const std::function<void(int, int)>& item);

  private:
    struct Job {
        const std::function<void(int, int)>* item = nullptr;
        int n = 0;
        std::atomic<int> next{0}, done{0};
        void work(int slot);
    };
    void worker_loop(int slot);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::shared_ptr<Job> job_;             // the current job (guarded by mutex_)
    std::atomic<unsigned> generation_{0};  // bumped for every job: spinning workers watch it
    std::atomic<int> sleeping_{0};
    bool stop_ = false;
};

}  // namespace kvs::cpu
