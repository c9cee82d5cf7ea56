// The CUDA kernels through the CPU emulator: every op of the op harness
// (tests/support/op_harness.h: sizes that leave partial blocks and tiles, guard cells around every
// buffer, both thread orders within a phase), the emulator's own rules (phases, launches a GPU
// would refuse) and attention past 12,000 keys.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/emu/emu_kernels.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "kernels/emu/host_block.h"
#include "kernels/relative_difference.h"
#include "tests/support/op_harness.h"

using namespace kvs;

// Every op of the harness's table (tests/support/op_harness.h) on the emulated backend, in both
// thread orders within a phase (a kernel that reads what another thread writes in the same phase
// gives other bits in the other order): within each op's tolerance of the reference, the fused
// kernels the bits of their op-by-op kernels, no write outside a buffer.
TEST_CASE("op harness: every op on cuda-emulated, both thread orders", "[emulated][kernels]") {
    EmulatedCudaBackend forward, reverse;
    auto order = [](bool reversed) {
        return [reversed](bool on) {
            emu::set_thread_order(on && reversed ? emu::ThreadOrder::Reverse
                                                 : emu::ThreadOrder::Forward);
        };
    };
    const auto verdicts =
        test::run_op_harness({{"cuda-emulated", &forward, "", order(false)},
                              {"cuda-emulated, reversed", &reverse, "cuda-emulated", order(true)}});
    CHECK(verdicts.size() >= 2 * test::op_table().size());
    for (const test::OpVerdict& v : verdicts) {
        INFO(v.op << " (" << v.shape << ") on " << v.impl << ": " << v.difference << " against "
                  << v.tolerance << "; " << v.bits);
        CHECK(v.ok);
    }
}

TEST_CASE("the emulator runs every thread of a phase before the next phase starts",
          "[emulated][kernels]") {
    // Phase 1: each thread writes its slot; phase 2: each thread reads its neighbour's. Without
    // the barrier between them (in reverse order, the neighbour has not written yet), the sum
    // would see unwritten slots.
    kern::LaunchShape s{{3, 1, 1}, {5, 2, 1}, 0};
    std::vector<int> seen(3 * 10, -1);
    for (auto order : {emu::ThreadOrder::Forward, emu::ThreadOrder::Reverse}) {
        emu::set_thread_order(order);
        emu::for_each_block(s, [&](emu::HostBlock& b) {
            std::vector<int> slot(b.threads(), -1);
            auto mine = b.per_thread<int>(0);
            b.phase([&](const kern::ThreadIndex& ix) {
                slot[ix.flat_thread()] = int(ix.block.x * 100 + ix.flat_thread());
                mine(ix) = int(ix.flat_thread());
            });
            b.phase([&](const kern::ThreadIndex& ix) {
                const unsigned next = (ix.flat_thread() + 1) % ix.block_threads();
                seen[ix.block.x * 10 + ix.flat_thread()] = slot[next] - mine(ix);
            });
        });
        emu::set_thread_order(emu::ThreadOrder::Forward);
        for (int blk = 0; blk < 3; ++blk)
            for (int t = 0; t < 10; ++t) CHECK(seen[blk * 10 + t] == blk * 100 + (t + 1) % 10 - t);
    }
}

TEST_CASE("the emulator refuses launches a GPU would refuse", "[emulated][kernels]") {
    std::vector<float> x(4, 1.0f), w(4, 1.0f), out(4);
    const kern::RmsNormArgs a{out.data(), x.data(), w.data(), 1, 4, 1e-5f};
    CHECK_THROWS_AS(emu::rmsnorm({{1, 1, 1}, {2048, 1, 1}, 0}, a), std::logic_error);
    CHECK_THROWS_AS(emu::rmsnorm({{0, 1, 1}, {128, 1, 1}, 0}, a), std::logic_error);
    CHECK_THROWS_AS(emu::rmsnorm({{1, 70000, 1}, {128, 1, 1}, 0}, a), std::logic_error);
    emu::rmsnorm(kern::rmsnorm_shape(1), a);
    CHECK(std::fabs(out[0] - 1.0f) < 1e-5f);
    // Like rmsnorm's, layernorm's shared memory holds one partial sum per thread of its largest
    // block.
    CHECK_THROWS_AS(kern::layernorm_shape(1, 2 * kern::kLayerNormThreads), std::logic_error);
}

TEST_CASE(
    "attention has no limit on the keys: a prefill past 12,000 keys and a decode past 13,000 "
    "match the CPU, only a head too large for one key's rows is a kvs::Error",
    "[emulated][kernels]") {
    // Shared memory holds one chunk of keys (flash-style prefill, split decode), not a row's
    // scores: the keys are unbounded, and the head size is bounded by one key's rows.
    CHECK_NOTHROW(kern::attention_prefill_shape(2, 8, 8, 1024));
    CHECK_THROWS_AS(kern::attention_prefill_shape(2, 1, 1, 12288), Error);
    CHECK_NOTHROW(kern::attention_decode_split_shape(100000, 8, 2, 256));
    CHECK_THROWS_AS(kern::attention_decode_split_shape(100, 1, 1, 12288), Error);
    EmulatedCudaBackend be;
    CpuBackend cpu;
    // Small dims, long keys: 2 query heads on 1 kv head of size 4.
    const int H = 2, KVH = 1, HD = 4, dim = H * HD, kv_dim = KVH * HD;
    for (auto [T, pos0] : {std::pair{3, 12300}, std::pair{1, 13000}}) {
        INFO("T=" << T << " pos0=" << pos0);
        const int n_keys = pos0 + T;
        std::vector<float> ck(std::size_t(n_keys) * kv_dim), cv(ck.size());
        for (std::size_t i = 0; i < ck.size(); ++i) {
            ck[i] = std::sin(0.01f * float(i));
            cv[i] = std::cos(0.003f * float(i));
        }
        std::vector<float> q(std::size_t(T) * dim);
        for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.7f * float(i)) * 2.0f;
        const std::size_t np = std::size_t(H) * T * n_keys;
        std::vector<float> out(q.size()), want(q.size()), p(np), want_p(np);
        be.attention({out.data(), out.size()}, {q.data(), q.size()}, {ck.data(), ck.size()},
                     {cv.data(), cv.size()}, {p.data(), np}, T, pos0, H, KVH, HD, true);
        cpu.attention({want.data(), want.size()}, {q.data(), q.size()}, {ck.data(), ck.size()},
                      {cv.data(), cv.size()}, {want_p.data(), np}, T, pos0, H, KVH, HD, true);
        // Over 12,000 keys the flash prefill's running sums (rescaled chunk by chunk) and the
        // CPU's (one pass) part by about 1e-5.
        CHECK(relative_difference(out, want) < 1e-4);
        CHECK(relative_difference(p, want_p) < 1e-4);
    }
}
