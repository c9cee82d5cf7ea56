#include "kernels/cpu/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KVS_PAUSE() _mm_pause()
#else
#define KVS_PAUSE() std::this_thread::yield()
#endif

namespace kvs::cpu {
namespace {

// How long a worker watches for the next job before it sleeps: longer than the gap between a
// decode step's ops, short enough that an idle pool gives its core back at once to the eye.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

void ThreadPool::Job::work(int slot) {
    for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
        (*item)(i, slot);
        done.fetch_add(1, std::memory_order_release);
    }
}

ThreadPool::ThreadPool(int threads) {
    for (int slot = 1; slot < threads; ++slot)
        workers_.emplace_back([this, slot] { worker_loop(slot); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        stop_ = true;
        generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int slot) {
    unsigned seen = 0;
    for (;;) {
        // Spin on the generation first; sleep when nothing came.
        const auto until = std::chrono::steady_clock::now() + kSpin;
        while (generation_.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until)
            for (int k = 0; k < 64; ++k) KVS_PAUSE();
        std::shared_ptr<Job> job;
        {
            std::unique_lock<std::mutex> lk(mutex_);
            if (generation_.load() == seen) {
                sleeping_.fetch_add(1);
                wake_.wait(lk, [&] { return generation_.load() != seen; });
                sleeping_.fetch_sub(1);
            }
            if (stop_) return;
            seen = generation_.load();
            job = job_;
        }
        // A job that finished before this worker woke has no items left: work() returns at once.
        if (job) job->work(slot);
    }
}

void ThreadPool::run(int n, const std::function<void(int, int)>& item) {
    if (workers_.empty() || n <= 1) {
        for (int i = 0; i < n; ++i) item(i, 0);
        return;
    }
    auto job = std::make_shared<Job>();
    job->item = &item;
    job->n = n;
    {
        std::lock_guard<std::mutex> lk(mutex_);
        job_ = job;
        generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleeping_.load() > 0) wake_.notify_all();
    job->work(0);
    // Only items a worker has claimed are left: wait for those, nothing else.
    // Past a short spin, yield: on a busy machine that worker may need this very core.
    for (int spins = 0; job->done.load(std::memory_order_acquire) < n; ++spins)
        if (spins < 4096)
            KVS_PAUSE();
        else
            std::this_thread::yield();
    std::lock_guard<std::mutex> lk(mutex_);
    if (job_ == job) job_.reset();  // `item` dies with this call: no worker may start it later
}

}  // namespace kvs::cpu
