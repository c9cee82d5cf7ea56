#pragma once
// The CPU side of the Block contract in kernels/cuda/block_phases.cuh, and the two ways the
// emulator launches a kernel: thread by thread (kernels without barriers) and block by block in
// phases (kernels that cooperate through shared memory). Grid and block shapes, the index
// arithmetic and the bounds checks are the kernels' own; only the threads run one at a time.
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/block_phases.cuh"
#include "kernels/cuda/launch_shapes.h"

namespace kvs::emu {

using kern::Dim3;
using kern::LaunchShape;
using kern::ThreadIndex;

// Order in which the threads of one phase run. A correct kernel gives the same bits either way;
// tests run both to catch a thread reading what another wrote in the same phase.
enum class ThreadOrder { Forward, Reverse };
void set_thread_order(ThreadOrder order);
ThreadOrder thread_order();

// Order in which the blocks of a launch run: in index order (0), or as a persistent grid of
// `grid` blocks takes them (block b runs blocks b, b + grid, b + 2 grid, ... of the launch, one
// after another, grid blocks in turn): the order of the persistent decode kernel (docs/cuda.md).
// Blocks of one launch that need no order give the same bits either way.
void set_block_order(unsigned persistent_grid);
unsigned block_order();

template <class T>
class HostLocal {
  public:
    HostLocal(std::size_t threads, T init) : v_(threads, init) {}
    T& operator()(const ThreadIndex& ix) { return v_[ix.flat_thread()]; }
    std::vector<T>& lanes() { return v_; }  // by flat thread index

  private:
    std::vector<T> v_;
};

class HostBlock {
  public:
    HostBlock(Dim3 grid, Dim3 block_dim, Dim3 block)
        : grid_(grid), dim_(block_dim), block_(block) {}
    Dim3 block_idx() const { return block_; }
    Dim3 grid_dim() const { return grid_; }
    Dim3 block_dim() const { return dim_; }
    std::size_t threads() const { return std::size_t(dim_.x) * dim_.y * dim_.z; }

    // Every thread runs f, in CUDA's linear order (x fastest) or its reverse; returning is the
    // barrier.
    template <class F>
    void phase(F&& f) const {
        ThreadIndex ix{grid_, dim_, block_, {}};
        if (thread_order() == ThreadOrder::Reverse) {
            for (unsigned z = dim_.z; z-- > 0;)
                for (unsigned y = dim_.y; y-- > 0;)
                    for (unsigned x = dim_.x; x-- > 0;) {
                        ix.thread = {x, y, z};
                        f(static_cast<const ThreadIndex&>(ix));
                    }
            return;
        }
        for (unsigned z = 0; z < dim_.z; ++z)
            for (unsigned y = 0; y < dim_.y; ++y)
                for (unsigned x = 0; x < dim_.x; ++x) {
                    ix.thread = {x, y, z};
                    f(static_cast<const ThreadIndex&>(ix));
                }
    }
    template <class T>
    HostLocal<T> per_thread(T init) const {
        return HostLocal<T>(threads(), init);
    }
    void warp_sum(HostLocal<float>& v) const {
        butterfly(v, [](float a, float b) { return kern::warp_sum_combine(a, b); });
    }
    void warp_max(HostLocal<float>& v) const {
        butterfly(v, [](float a, float b) { return kern::warp_max_combine(a, b); });
    }
    ThreadIndex index_of(std::size_t flat) const {
        const unsigned x = unsigned(flat % dim_.x), y = unsigned(flat / dim_.x % dim_.y),
                       z = unsigned(flat / (std::size_t(dim_.x) * dim_.y));
        return {grid_, dim_, block_, {x, y, z}};
    }

  private:
    // Each lane of each warp takes combine(its value, lane ^ offset's value), all lanes reading
    // the values from before the step, as __shfl_xor_sync does.
    template <class Combine>
    void butterfly(HostLocal<float>& v, Combine combine) const {
        constexpr unsigned W = kern::kWarpSize;
        if (threads() % W != 0)
            throw std::logic_error("emulated warp reduction in a block of partial warps");
        std::vector<float>& lanes = v.lanes();
        for (std::size_t w0 = 0; w0 < lanes.size(); w0 += W) {
            float* warp = lanes.data() + w0;
            for (unsigned offset = W / 2; offset > 0; offset /= 2) {
                float before[W];
                for (unsigned l = 0; l < W; ++l) before[l] = warp[l];
                for (unsigned l = 0; l < W; ++l) warp[l] = combine(before[l], before[l ^ offset]);
            }
        }
    }

    Dim3 grid_, dim_, block_;
};

// Calls block_fn(HostBlock&) for every block of the grid, x fastest.
template <class F>
void for_each_block(const LaunchShape& s, F&& block_fn) {
    const unsigned n = s.grid.x * s.grid.y * s.grid.z, step = block_order() ? block_order() : n;
    for (unsigned first = 0; first < step && first < n; ++first)
        for (unsigned i = first; i < n; i += step) {
            HostBlock b(s.grid, s.block,
                        {i % s.grid.x, i / s.grid.x % s.grid.y, i / (s.grid.x * s.grid.y)});
            block_fn(b);
        }
}

// A kernel without barriers: every thread of every block, one phase each.
template <class F>
void for_each_thread(const LaunchShape& s, F&& thread_fn) {
    for_each_block(s, [&](HostBlock& b) { b.phase(thread_fn); });
}

}  // namespace kvs::emu
