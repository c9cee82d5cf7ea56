#include "kernels/shim/thread_grid.h"

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/cuda/block_phases.cuh"
#include "kernels/shim/cuda_shim.h"

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace kvs::shim {
namespace {

// One launch: the block's barrier, one barrier per warp and a slot per thread for the shuffles,
// and the block's dynamic shared memory, shared by the team of threads.
struct Launch {
    pthread_barrier_t barrier;
    std::vector<pthread_barrier_t> warp_barriers;
    std::vector<float> lanes;
    std::vector<float> dynamic;
};

thread_local Launch* t_launch = nullptr;
thread_local unsigned t_flat = 0;  // this thread's position in its block, x fastest

void fill_nan(std::vector<float>& v) {
    for (float& f : v) f = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

void run_grid(const kern::LaunchShape& s, const std::function<void()>& body) {
    kern::check_launch_shape(s, "a kernel on the CPU shim");
    const unsigned n = s.block.x * s.block.y * s.block.z;
    Launch launch;
    launch.dynamic.resize(s.shared_bytes / sizeof(float));
    fill_nan(launch.dynamic);
    const unsigned warp = kern::kWarpSize, warps = (n + warp - 1) / warp;
    launch.lanes.resize(n);
    launch.warp_barriers.resize(warps);
    bool ok = pthread_barrier_init(&launch.barrier, nullptr, n) == 0;
    for (unsigned w = 0; w < warps; ++w) {
        const unsigned lanes = n - w * warp < warp ? n - w * warp : warp;
        ok = pthread_barrier_init(&launch.warp_barriers[w], nullptr, lanes) == 0 && ok;
    }
    if (!ok) throw std::runtime_error("shim: pthread_barrier_init failed");
    std::vector<std::thread> team;
    team.reserve(n);
    for (unsigned flat = 0; flat < n; ++flat)
        team.emplace_back([&s, &body, &launch, flat] {
            t_launch = &launch;
            t_flat = flat;
            gridDim = {s.grid.x, s.grid.y, s.grid.z};
            blockDim = {s.block.x, s.block.y, s.block.z};
            threadIdx = {flat % s.block.x, flat / s.block.x % s.block.y,
                         flat / (s.block.x * s.block.y)};
            for (unsigned z = 0; z < s.grid.z; ++z)
                for (unsigned y = 0; y < s.grid.y; ++y)
                    for (unsigned x = 0; x < s.grid.x; ++x) {
                        blockIdx = {x, y, z};
                        body();
                        // The block is over for everyone before the next one reuses shared memory.
                        if (pthread_barrier_wait(&launch.barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
                            fill_nan(launch.dynamic);
                        pthread_barrier_wait(&launch.barrier);
                    }
            t_launch = nullptr;
        });
    for (std::thread& t : team) t.join();
    pthread_barrier_destroy(&launch.barrier);
    for (pthread_barrier_t& b : launch.warp_barriers) pthread_barrier_destroy(&b);
}

float* dynamic_shared() {
    return t_launch->dynamic.data();
}

}  // namespace kvs::shim

void __syncthreads() {
    pthread_barrier_wait(&kvs::shim::t_launch->barrier);
}

float __shfl_xor_sync(unsigned /*mask*/, float v, int lane_mask) {
    using kvs::shim::t_flat;
    kvs::shim::Launch& l = *kvs::shim::t_launch;
    pthread_barrier_t* warp = &l.warp_barriers[t_flat / kvs::kern::kWarpSize];
    const unsigned partner = t_flat ^ static_cast<unsigned>(lane_mask);
    if (partner >= l.lanes.size()) {
        std::fprintf(stderr, "shim: __shfl_xor_sync to lane %u of a partial warp\n", partner);
        std::abort();
    }
    l.lanes[t_flat] = v;
    pthread_barrier_wait(warp);  // every lane's value is in
    const float other = l.lanes[partner];
    pthread_barrier_wait(warp);  // every lane has read before any writes the next value
    return other;
}

int atomicMax(int* address, int val) {
    std::atomic_ref<int> a(*address);
    int old = a.load();
    while (old < val && !a.compare_exchange_weak(old, val)) {
    }
    return old;
}

float atomicAdd(float* address, float val) {
    std::atomic_ref<float> a(*address);
    return a.fetch_add(val);
}

int atomicAdd(int* address, int val) {
    std::atomic_ref<int> a(*address);
    return a.fetch_add(val);
}
