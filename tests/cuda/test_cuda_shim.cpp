// The kernel files of kernels/cuda/, compiled as C++ and run by the CPU shim (one OS thread per
// CUDA thread, a real barrier for __syncthreads), against the phase-by-phase emulator over the same
// launch shapes: the same bits, output by output. Small shapes that still leave partial blocks and
// tiles, so scripts/tsan-shim.sh can run this under ThreadSanitizer in seconds. Also here: the
// deliberately racy kernel of tests/shim/racy_max.cuh passes the emulator in both thread orders
// (that it fails under the shim is scripts/tsan-shim.sh's check).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/cuda/attention_plan.h"
#include "kernels/cuda/kernel_launchers.h"
#include "kernels/emu/emu_kernels.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "kernels/emu/host_block.h"
#include "kernels/shim/shim_runner.h"
#include "tests/shim/racy_max.cuh"
#include "tests/support/op_harness.h"
#include "tests/support/random_floats.h"

using namespace kvs;
using kern::LaunchShape;
using test::random_floats;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Buffers an op reads and writes; `run` launches it on them, either way.
using Buffers = std::vector<std::vector<float>>;
using Run = std::function<void(Buffers&, bool shim)>;

// Runs the op on two identical copies of the buffers, emulator and shim; every buffer must match.
void check_same(const Buffers& start, const Run& run) {
    Buffers emu_bufs = start, shim_bufs = start;
    run(emu_bufs, false);
    run(shim_bufs, true);
    for (std::size_t i = 0; i < start.size(); ++i) {
        INFO("buffer " << i);
        CHECK(same_bits(emu_bufs[i], shim_bufs[i]));
    }
    CHECK_FALSE(same_bits(start[0], shim_bufs[0]));  // buffer 0, the output, was written
}

}  // namespace

// Every op of the harness's table (tests/support/op_harness.h) through the emulated backend with
// the shim as its kernel runner: the .cu files as C++, threads of a block at once, the emulator's
// bits (and so within each op's tolerance of the reference).
TEST_CASE("op harness: every op on cuda-shim, the emulator's bits", "[shim]") {
    EmulatedCudaBackend emulated, shim(shim_runner());
    REQUIRE(shim.name() == "cuda-shim");
    const auto verdicts = test::run_op_harness(
        {{"cuda-emulated", &emulated, ""}, {"cuda-shim", &shim, "cuda-emulated"}});
    CHECK(verdicts.size() >= 2 * test::op_table().size());
    for (const test::OpVerdict& v : verdicts) {
        INFO(v.op << " (" << v.shape << ") on " << v.impl << ": " << v.difference << " against "
                  << v.tolerance << "; " << v.bits);
        CHECK(v.ok);
    }
}

TEST_CASE("shim: the fused decode kernels give the emulator's bits", "[shim]") {
    // Small shapes: rows fewer than a block's warps, fewer chunks than lanes, a row with a tail
    // (hidden 54: 13 chunks of 4 and 2 values), 4 query heads on 2 kv heads of size 10.
    const int dim = 40, kv_dim = 20, head_dim = 10, hidden = 54, vocab = 37, capacity = 160;
    const int n_heads = dim / head_dim, n_kv_heads = kv_dim / head_dim;
    const std::vector<float> inv_freq = {1.0f, 0.3f, 0.1f, 0.03f, 0.01f};
    std::vector<int> token = {3};
    for (int pos : {0, 9}) {  // layer 0 with the embedding row; a later one with biases
        INFO("norm_qkv, pos " << pos);
        const bool embed = pos == 0;
        check_same(
            {std::vector<float>(dim, 0.0f), random_floats(dim, 40),
             random_floats(capacity * kv_dim, 41), random_floats(capacity * kv_dim, 42),
             random_floats(vocab * dim, 43), random_floats(dim, 44), random_floats(dim * dim, 45),
             random_floats(kv_dim * dim, 46), random_floats(kv_dim * dim, 47),
             random_floats(dim + 2 * kv_dim, 48), std::vector<float>(dim + 2 * kv_dim, 0.0f)},
            [&](Buffers& b, bool shim) {
                kern::FusedQkvArgs a{};
                a.q = b[0].data();
                a.x = b[1].data();
                a.cache_k = b[2].data(), a.cache_v = b[3].data();
                a.embed = embed ? b[4].data() : nullptr;
                a.token = token.data();
                a.norm = b[5].data();
                a.wq = b[6].data(), a.wk = b[7].data(), a.wv = b[8].data();
                if (!embed)
                    a.bq = b[9].data(), a.bk = b[9].data() + dim, a.bv = b[9].data() + dim + kv_dim;
                a.q_keep = b[10].data(), a.k_keep = b[10].data() + dim,
                a.v_keep = b[10].data() + dim + kv_dim;
                a.inv_freq = inv_freq.data();
                a.dim = dim, a.kv_dim = kv_dim, a.head_dim = head_dim, a.eps = 1e-5f;
                a.pos0 = pos;
                const LaunchShape s = kern::fused_qkv_shape(dim, kv_dim);
                shim ? kern::launch_fused_norm_qkv(s, nullptr, a, false)
                     : emu::fused_norm_qkv(s, a);
            });
    }
    // Attention after 150 keys: three chunks of 64, taken by a grid of 2 blocks per kv head (the
    // split's blocks loop), the last block of each kv head combining; the tickets end at 0.
    for (int blocks : {2, 3}) {
        INFO("attention, " << blocks << " split blocks per kv head");
        const int pos = 149;
        std::vector<int> tickets(n_kv_heads, 0);
        const std::size_t partial = kern::decode_partial_floats_for_cache(
            std::size_t(capacity) * kv_dim, n_heads, n_kv_heads, head_dim);
        check_same({std::vector<float>(dim, 0.0f), std::vector<float>(n_heads * (pos + 1), 0.0f),
                    random_floats(dim, 50), random_floats(capacity * kv_dim, 51),
                    random_floats(capacity * kv_dim, 52), std::vector<float>(partial, 0.0f),
                    std::vector<float>(dim, 0.0f)},
                   [&](Buffers& b, bool shim) {
                       kern::FusedAttentionArgs f{};
                       f.att = {b[0].data(), b[2].data(), b[3].data(), b[4].data(), b[1].data(), 1,
                                pos,         n_heads,     n_kv_heads,  head_dim,    b[5].data()};
                       f.tickets = tickets.data();
                       f.out_keep = b[6].data();
                       LaunchShape s =
                           kern::fused_attention_shape(pos + 1, n_heads, n_kv_heads, head_dim);
                       s.grid.y = unsigned(blocks);
                       shim ? kern::launch_fused_attention(s, nullptr, f, false)
                            : emu::fused_attention(s, f);
                       CHECK(tickets == std::vector<int>(n_kv_heads, 0));
                   });
    }
    check_same(
        {random_floats(dim, 60), random_floats(hidden, 61), random_floats(dim * hidden, 62)},
        [&](Buffers& b, bool shim) {
            const kern::FusedMatvecAddArgs a{b[0].data(), b[1].data(), b[2].data(), hidden, dim};
            const LaunchShape s = kern::fused_rows_shape(dim);
            shim ? kern::launch_fused_matvec_add(s, nullptr, a, false)
                 : emu::fused_matvec_add(s, a);
        });
    check_same({std::vector<float>(hidden, 0.0f), random_floats(dim, 63), random_floats(dim, 64),
                random_floats(hidden * dim, 65), random_floats(hidden * dim, 66)},
               [&](Buffers& b, bool shim) {
                   const kern::FusedGateUpArgs a{b[1].data(), b[2].data(), b[3].data(), b[4].data(),
                                                 b[0].data(), dim,         hidden,      1e-5f};
                   const LaunchShape s = kern::fused_rows_shape(hidden, dim);
                   shim ? kern::launch_fused_norm_gate_up(s, nullptr, a, false)
                        : emu::fused_norm_gate_up(s, a);
               });
    check_same({std::vector<float>(vocab, 0.0f), random_floats(dim, 67), random_floats(dim, 68),
                random_floats(vocab * dim, 69)},
               [&](Buffers& b, bool shim) {
                   const kern::FusedLogitsArgs a{b[1].data(), b[2].data(), b[3].data(), b[0].data(),
                                                 dim,         vocab,       1e-5f};
                   const LaunchShape s = kern::fused_rows_shape(vocab, dim);
                   shim ? kern::launch_fused_norm_logits(s, nullptr, a, false)
                        : emu::fused_norm_logits(s, a);
               });
}

TEST_CASE("shim: attention through a shuffled block table gives the emulator's bits", "[shim]") {
    // A paged pool of 8 blocks of 3 rows, 4 query heads on 2 kv heads of size 10; 20 keys (a
    // partial last block), decode (split, combine) and a 4-row prefill; keys 0..1 are sinks, the
    // rest 2 positions further on.
    const int n_heads = 4, n_kv_heads = 2, head_dim = 10, dim = 40, kv_dim = 20, bs = 3;
    const int pool_rows = 8 * bs;
    const std::vector<int> table = {5, 2, 7, 0, 3, 6, 1, 4};
    for (const int T : {1, 4}) {
        INFO("T " << T);
        const int pos0 = 20 - T;
        kern::AttentionCall call;
        call.cache_k = {nullptr, std::size_t(pool_rows) * kv_dim};
        call.T = T, call.pos0 = pos0, call.n_heads = n_heads, call.n_kv_heads = n_kv_heads;
        call.head_dim = head_dim;
        kern::AttentionPlan p = kern::plan_attention(call, {}, 32);
        PagedKeys keys;
        keys.table = {table.data(), static_cast<int>(table.size()), bs};
        keys.sinks = 2;
        keys.skip = 2;
        kern::plan_paged(p, keys, table.data());
        check_same({std::vector<float>(T * dim, 0.0f), random_floats(T * dim, 70),
                    random_floats(pool_rows * kv_dim, 71), random_floats(pool_rows * kv_dim, 72),
                    std::vector<float>(p.partial_floats + 1, 0.0f),
                    std::vector<float>(n_heads * T * 20, 0.0f)},
                   [&](Buffers& b, bool shim) {
                       kern::AttentionArgs a = p.args;
                       a.out = b[0].data(), a.q = b[1].data();
                       a.cache_k = b[2].data(), a.cache_v = b[3].data();
                       a.partial = b[4].data(), a.probs = b[5].data();
                       if (p.prefill)
                           return shim ? kern::launch_attention_prefill(p.prefill_shape, nullptr, a)
                                       : emu::attention_prefill(p.prefill_shape, a);
                       if (shim) {
                           kern::launch_attention_decode_split(p.split, nullptr, a);
                           kern::launch_attention_decode_combine(p.combine, nullptr, a);
                       } else {
                           emu::attention_decode_split(p.split, a);
                           emu::attention_decode_combine(p.combine, a);
                       }
                   });
    }
}

TEST_CASE("shim: a launch shape a GPU would refuse is refused", "[shim]") {
    const LaunchShape too_wide{{1, 1, 1}, {2048, 1, 1}, 0};
    std::vector<float> x(4), y(4);
    CHECK_THROWS_AS(kern::launch_add(too_wide, nullptr, {x.data(), y.data(), 4}), std::logic_error);
}

TEST_CASE("the racy shared maximum passes the phase-by-phase emulator in both thread orders",
          "[shim][emulated]") {
    // Why the shim exists: one thread at a time, the unguarded read-compare-write is never
    // interleaved, so the emulator cannot see the bug that scripts/tsan-shim.sh shows it has.
    const int n = 4096;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % n);
    const LaunchShape s{{1, 1, 1}, {race_demo::kRaceThreads, 1, 1}, 0};
    for (emu::ThreadOrder order : {emu::ThreadOrder::Forward, emu::ThreadOrder::Reverse}) {
        emu::set_thread_order(order);
        float out = 0, shared_max = 0;
        emu::for_each_block(s, [&](emu::HostBlock& b) {
            race_demo::racy_max_block(b, race_demo::MaxArgs{&out, x.data(), n}, &shared_max);
        });
        CHECK(out == static_cast<float>(n - 1));
    }
    emu::set_thread_order(emu::ThreadOrder::Forward);
}

TEST_CASE("emulated warp_sum and warp_max: every lane of each warp gets its warp's result",
          "[shim][emulated]") {
    const LaunchShape s{{1, 1, 1}, {32, 2, 1}, 0};  // two warps
    emu::for_each_block(s, [&](emu::HostBlock& b) {
        auto sum = b.per_thread<float>(0.0f), mx = b.per_thread<float>(0.0f);
        b.phase([&](const kern::ThreadIndex& ix) {
            const unsigned flat = ix.flat_thread();
            sum(ix) = static_cast<float>(flat);           // small integers: the sums are exact
            mx(ix) = static_cast<float>(flat * 37 % 64);  // a permutation of 0..63
        });
        b.warp_sum(sum);
        b.warp_max(mx);
        b.phase([&](const kern::ThreadIndex& ix) {
            const bool second = ix.flat_thread() >= 32;
            CHECK(sum(ix) == (second ? 1520.0f : 496.0f));  // 32..63 and 0..31
            float want = 0;
            for (unsigned f = second ? 32 : 0; f < (second ? 64u : 32u); ++f)
                want = std::max(want, static_cast<float>(f * 37 % 64));
            CHECK(mx(ix) == want);
        });
    });
    const LaunchShape partial{{1, 1, 1}, {48, 1, 1}, 0};
    emu::for_each_block(partial, [&](emu::HostBlock& b) {
        auto v = b.per_thread<float>(1.0f);
        CHECK_THROWS_AS(b.warp_sum(v), std::logic_error);
    });
}
