// The fast CPU ops (kernels/cpu/fast_ops.h) against the plain run.c-order ones
// (kernels/cpu/reference_ops.h) on random data, shapes chosen to hit every tile and tail; and the
// property the engine relies on: a row computes to the same bits alone, in a batch, on threads.
// Every SIMD path this CPU runs (kernels/cpu/isa.h) is tested, not only the one chosen at start.
#include <algorithm>
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/model/model_config.h"
#include "core/model/rope_frequencies.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/fast_ops.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/reference_ops.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/vec_math.h"
#include "tests/support/float_diff.h"
#include "tests/support/op_harness.h"
#include "tests/support/random_floats.h"

using namespace kvs;
using test::max_abs_diff;
using test::random_floats;
using test::same_bits;
// vec_math.h as this test's own flags compile it (8 lanes)
namespace vm = kvs::cpu::isa_default;

namespace {

// The op tables of every path this CPU runs, lowest first.
std::vector<const cpu::Kernels*> paths() {
    std::vector<const cpu::Kernels*> out;
    for (cpu::Isa isa : cpu::available_isas()) out.push_back(cpu::kernels_for(isa));
    REQUIRE(!out.empty());
    for (const cpu::Kernels* k : out) REQUIRE(k != nullptr);
    return out;
}

}  // namespace

TEST_CASE("exp_approx stays within a few ulp of std::exp", "[cpu_ops]") {
    double worst_rel = 0;
    for (float x = -87.0f; x <= 88.0f; x += 0.00731f) {
        const vm::Vec e = vm::exp_approx(vm::splat(x));
        const double ref = std::exp(static_cast<double>(x));
        worst_rel = std::max(worst_rel, std::fabs(e[0] - ref) / ref);
        CHECK(e[0] == e[7]);  // every lane computes the same function
    }
    INFO("worst relative error " << worst_rel);
    CHECK(worst_rel < 4e-7);  // float epsilon is 1.19e-7
    // Below the clamp it returns exp(-87), not 0: tiny, positive, finite.
    const vm::Vec low = vm::exp_approx(vm::splat(-200.0f));
    CHECK(low[0] > 0.0f);
    CHECK(low[0] < 2e-38f);
}

TEST_CASE("sum_lanes8 reduces eight registers in the order of sum_lanes", "[cpu_ops]") {
    vm::Vec v[8];
    const auto r = random_floats(64, 3, 1000.0f);
    for (int i = 0; i < 8; ++i) v[i] = vm::load(r.data() + 8 * i);
    const vm::Vec s = vm::sum_lanes8(v);
    for (int i = 0; i < 8; ++i) CHECK(s[i] == vm::sum_lanes(v[i]));  // bit for bit
}

TEST_CASE("fast matmul matches the reference on every tile and tail shape", "[cpu_ops]") {
    // T: the few-token tiles (1, 2), the batch tiles (AVX-512 4 x 6, AVX2 4 x 3) whole and with
    // every count of tokens left over after them (6 + 1 .. 6 + 5, 12 + 1).
    for (const cpu::Kernels* k : paths())
        for (int n : {1, 5, 8, 13, 16, 33, 64, 172})
            for (int d : {1, 7, 8, 17, 64})
                for (int T : {1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 13}) {
                    INFO(cpu::isa_name(k->isa) << " T " << T << " n " << n << " d " << d);
                    const auto x = random_floats(std::size_t(T) * n, 1 + n);
                    const auto w = random_floats(std::size_t(d) * n, 2 + d);
                    std::vector<float> fast(std::size_t(T) * d), ref(fast.size());
                    k->matmul(fast.data(), x.data(), w.data(), T, n, d, nullptr);
                    ref::matmul(ref.data(), x.data(), w.data(), T, n, d);
                    CHECK(max_abs_diff(fast, ref) <= 1e-6 * n);
                }
}

TEST_CASE("a matmul row has the same bits alone, in a batch and on threads", "[cpu_ops]") {
    // T = 300: several cache blocks of tokens and the threaded path. 768 x 352: a matrix large
    // enough (270,336 weights) that one token against it goes row by row, a few tokens in tiles
    // of 3 rows (5, 8: on the 16-lane path; one row left after them), a batch in tiles (13: two
    // 4 x 6 batch tiles and one left over). 1024 x 259: 2 tokens, two rows left after the 3-row
    // tiles. n = 2048, T = 100: a token block shorter than the batch, and a row count (d = 70)
    // that leaves rows after the 4-row tiles. 8 tokens against matrices in cache (a decode step
    // of 8 requests on the default model's shapes: 128 x 344, and 344 x 130 with a tail of 8
    // floats and two rows after the 4-row tiles): two 4 x 4 tiles on the 16-lane path, whose
    // sums are reduced sixteen at a time (sum_lanes16).
    for (const auto [T, n, d] :
         {std::array<int, 3>{300, 172, 100}, std::array<int, 3>{8, 128, 344},
          std::array<int, 3>{8, 344, 130}, std::array<int, 3>{5, 768, 352},
          std::array<int, 3>{8, 768, 352}, std::array<int, 3>{2, 1024, 259},
          std::array<int, 3>{13, 768, 352}, std::array<int, 3>{100, 2048, 70}})
        for (const cpu::Kernels* k : paths()) {
            const auto x = random_floats(std::size_t(T) * n, 7);
            const auto w = random_floats(std::size_t(d) * n, 8);
            INFO(cpu::isa_name(k->isa) << " T " << T << " n " << n << " d " << d);
            std::vector<float> batch(std::size_t(T) * d), single(batch.size());
            k->matmul(batch.data(), x.data(), w.data(), T, n, d, nullptr);
            for (int t = 0; t < T; ++t)
                k->matmul(single.data() + std::size_t(t) * d, x.data() + std::size_t(t) * n,
                          w.data(), 1, n, d, nullptr);
            CHECK(same_bits(batch, single));
            for (int threads : {2, 3}) {
                cpu::ThreadPool pool(threads);
                std::vector<float> threaded(batch.size());
                k->matmul(threaded.data(), x.data(), w.data(), T, n, d, &pool);
                CHECK(same_bits(batch, threaded));
            }
        }
}

TEST_CASE("the thread pool runs every item exactly once, also many jobs back to back",
          "[cpu_ops]") {
    for (int threads : {1, 2, 4}) {
        cpu::ThreadPool pool(threads);
        CHECK(pool.threads() == threads);
        for (int n : {0, 1, 2, 7, 100}) {
            for (int rep = 0; rep < 200; ++rep) {  // jobs back to back: a late worker must not
                std::vector<int> hits(n, 0);       // touch the next job's items
                std::vector<int> slots(n, -1);
                pool.run(n, [&](int i, int slot) {
                    ++hits[i];
                    slots[i] = slot;
                });
                CHECK(std::count(hits.begin(), hits.end(), 1) == n);
                for (int s : slots) CHECK((s >= 0 && s < threads));
            }
        }
    }
}

TEST_CASE(
    "fast attention matches the reference, causal or not, and is the same batched or row by row",
    "[cpu_ops]") {
    struct Shape {
        int T, pos0, n_heads, n_kv_heads, head_dim;
    };
    for (const cpu::Kernels* kp : paths())
        for (const Shape sh :
             {Shape{5, 0, 8, 4, 8}, Shape{1, 37, 8, 4, 8}, Shape{3, 9, 4, 2, 4},
              Shape{17, 0, 2, 1, 12}, Shape{1, 200, 4, 4, 16}, Shape{4, 30, 4, 2, 40}}) {
            const int dim = sh.n_heads * sh.head_dim, kv_dim = sh.n_kv_heads * sh.head_dim;
            const int n_keys = sh.pos0 + sh.T;
            for (bool causal : {true, false}) {
                INFO(cpu::isa_name(kp->isa)
                     << " T " << sh.T << " pos0 " << sh.pos0 << " heads " << sh.n_heads << "/"
                     << sh.n_kv_heads << " head_dim " << sh.head_dim << " causal " << causal);
                const auto q = random_floats(std::size_t(sh.T) * dim, 11, 2.0f);
                const auto k = random_floats(std::size_t(n_keys) * kv_dim, 12, 2.0f);
                const auto v = random_floats(std::size_t(n_keys) * kv_dim, 13);
                const std::size_t np = std::size_t(sh.n_heads) * sh.T * n_keys;
                std::vector<float> out(std::size_t(sh.T) * dim), out_ref(out.size());
                std::vector<float> probs(np, -1.0f), probs_ref(np, -1.0f), scratch;
                kp->attention(out.data(), q.data(), k.data(), v.data(), probs.data(), sh.T, sh.pos0,
                              sh.n_heads, sh.n_kv_heads, sh.head_dim, nullptr, scratch, causal);
                ref::attention(out_ref.data(), q.data(), k.data(), v.data(), probs_ref.data(), sh.T,
                               sh.pos0, sh.n_heads, sh.n_kv_heads, sh.head_dim, causal);
                CHECK(max_abs_diff(out, out_ref) <= 1e-5);
                CHECK(max_abs_diff(probs, probs_ref) <= 1e-6);
                // Without the mask the first row weighs the last key too (with it, 0).
                const float first_to_last = probs[std::size_t(n_keys) - 1];
                if (causal)
                    CHECK((first_to_last == 0.0f || sh.T == 1));
                else
                    CHECK(first_to_last > 0.0f);

                // Row by row, as cached decode computes them: same bits (causal rows only: a
                // bidirectional row sees keys no cache would hold yet).
                if (causal) {
                    std::vector<float> rows(out.size());
                    for (int t = 0; t < sh.T; ++t)
                        kp->attention(rows.data() + std::size_t(t) * dim,
                                      q.data() + std::size_t(t) * dim, k.data(), v.data(), nullptr,
                                      1, sh.pos0 + t, sh.n_heads, sh.n_kv_heads, sh.head_dim,
                                      nullptr, scratch, true);
                    CHECK(same_bits(out, rows));
                }
                cpu::ThreadPool pool(2);
                std::vector<float> threaded(out.size());
                kp->attention(threaded.data(), q.data(), k.data(), v.data(), nullptr, sh.T, sh.pos0,
                              sh.n_heads, sh.n_kv_heads, sh.head_dim, &pool, scratch, causal);
                CHECK(same_bits(out, threaded));
            }
        }
}

TEST_CASE("attention over keys named one by one gives the contiguous rows' bits", "[cpu_ops]") {
    // A paged cache read in place: each key's K and V row wherever its block put it (here every
    // row of a shuffled copy), the same sums in the same order as the contiguous rows.
    const int T = 3, pos0 = 21, n_heads = 4, n_kv_heads = 2, head_dim = 12;
    const int dim = n_heads * head_dim, kv_dim = n_kv_heads * head_dim, n_keys = pos0 + T;
    const auto q = random_floats(std::size_t(T) * dim, 31, 2.0f);
    const auto k = random_floats(std::size_t(n_keys) * kv_dim, 32, 2.0f);
    const auto v = random_floats(std::size_t(n_keys) * kv_dim, 33);
    // Key s at row (7 s + 3) % n_keys of the copies.
    std::vector<float> k_moved(k.size()), v_moved(v.size());
    std::vector<const float*> k_rows(n_keys), v_rows(n_keys);
    for (int s = 0; s < n_keys; ++s) {
        const std::size_t to = std::size_t((7 * s + 3) % n_keys) * kv_dim;
        std::copy_n(k.begin() + std::size_t(s) * kv_dim, kv_dim, k_moved.begin() + to);
        std::copy_n(v.begin() + std::size_t(s) * kv_dim, kv_dim, v_moved.begin() + to);
        k_rows[s] = k_moved.data() + to;
        v_rows[s] = v_moved.data() + to;
    }
    for (const cpu::Kernels* kp : paths())
        for (bool causal : {true, false}) {
            INFO(cpu::isa_name(kp->isa) << " causal " << causal);
            const std::size_t np = std::size_t(n_heads) * T * n_keys;
            std::vector<float> a(std::size_t(T) * dim), b(a.size()), pa(np), pb(np), scratch;
            kp->attention(a.data(), q.data(), k.data(), v.data(), pa.data(), T, pos0, n_heads,
                          n_kv_heads, head_dim, nullptr, scratch, causal);
            kp->attention_rows(b.data(), q.data(), k_rows.data(), v_rows.data(), pb.data(), T, pos0,
                               n_heads, n_kv_heads, head_dim, nullptr, scratch, causal);
            CHECK(same_bits(a, b));
            CHECK(same_bits(pa, pb));
            cpu::ThreadPool pool(2);
            kp->attention_rows(b.data(), q.data(), k_rows.data(), v_rows.data(), nullptr, T, pos0,
                               n_heads, n_kv_heads, head_dim, &pool, scratch, causal);
            CHECK(same_bits(a, b));
        }
}

// Every op of the harness's table (tests/support/op_harness.h) on the CPU backend, once per SIMD
// path this CPU has, against the plain reference ops: each within its tolerance, add bit for bit.
TEST_CASE("op harness: every op on each SIMD path of the CPU backend", "[cpu_ops]") {
    std::vector<std::unique_ptr<CpuBackend>> backends;
    std::vector<test::OpImpl> impls;
    for (cpu::Isa isa : cpu::available_isas()) {
        backends.push_back(std::make_unique<CpuBackend>());
        backends.back()->set_simd_path(isa);
        impls.push_back({std::string("cpu ") + cpu::isa_name(isa), backends.back().get(), ""});
    }
    const auto verdicts = test::run_op_harness(impls);
    CHECK(!verdicts.empty());
    for (const test::OpVerdict& v : verdicts) {
        INFO(v.op << " (" << v.shape << ") on " << v.impl << ": " << v.difference << " against "
                  << v.tolerance);
        CHECK(v.ok);
    }
}

// The RoPE table: at growing positions (the table grows) and back at early ones, then with
// another model's frequencies (the table starts over) and back.
TEST_CASE("the RoPE table grows, starts over for other frequencies, and matches the reference",
          "[cpu_ops]") {
    const int T = 3, dim = 36, kv_dim = 18, head_dim = 6;
    ModelConfig llama2c, other;
    llama2c.dim = other.dim = dim;
    llama2c.n_heads = other.n_heads = dim / head_dim;
    other.rope_theta = 500000.0f;
    other.rope_factors = {1.0f, 2.5f, 8.0f};
    cpu::RopeTable table;
    for (const ModelConfig* c : {&llama2c, &other, &llama2c})
        for (int pos0 : {0, 3, 40, 1}) {
            const std::vector<float> inv_freq = rope_inverse_frequencies(*c);
            auto q = random_floats(T * dim, 26 + pos0), k = random_floats(T * kv_dim, 27 + pos0);
            auto q_ref = q, k_ref = k;
            table.apply(q.data(), k.data(), T, pos0, dim, kv_dim, head_dim, inv_freq.data());
            ref::rope(q_ref.data(), k_ref.data(), T, pos0, dim, kv_dim, head_dim, inv_freq.data());
            CHECK(max_abs_diff(q, q_ref) <= 1e-6);
            CHECK(max_abs_diff(k, k_ref) <= 1e-6);
        }
}

TEST_CASE("RoPE frequencies: run.c's for a llama2.c model, the base and scaling of others",
          "[cpu_ops]") {
    ModelConfig c;
    c.dim = 64;
    c.n_heads = 4;  // head size 16: 8 pairs
    const int hd = c.head_dim();
    std::vector<float> inv = rope_inverse_frequencies(c);
    REQUIRE(inv.size() == 8);
    for (int p = 0; p < 8; ++p)  // run.c: 1.0f / powf(10000.0f, head_dim_idx / (float)head_size)
        CHECK(inv[p] == 1.0f / std::pow(10000.0f, (2 * p) / static_cast<float>(hd)));
    c.rope_theta = 100000.0f;
    c.rope_factors = std::vector<float>(8, 4.0f);  // linear scaling by 4
    inv = rope_inverse_frequencies(c);
    for (int p = 0; p < 8; ++p)
        CHECK(inv[p] == Approx(std::pow(100000.0, -2.0 * p / hd) / 4).epsilon(1e-6));

    // Llama 3's scaling, against transformers' _compute_llama3_parameters written out in
    // doubles: wavelengths under 8192 / 4 keep their frequency, over 8192 / 1 are divided by 8,
    // the ones between are blended.
    const int head = 128;
    const std::vector<float> f = llama3_rope_factors(head, 500000.0f, 8.0, 1.0, 4.0, 8192.0);
    REQUIRE(f.size() == 64);
    int kept = 0, divided = 0, blended = 0;
    for (int p = 0; p < 64; ++p) {
        const double inv_p = std::pow(500000.0, -2.0 * p / head);
        const double wavelength = 2 * 3.14159265358979323846 / inv_p;
        double scaled = inv_p;
        if (wavelength > 8192.0) {
            scaled = inv_p / 8;
            ++divided;
        } else if (wavelength >= 8192.0 / 4) {
            const double s = (8192.0 / wavelength - 1.0) / (4.0 - 1.0);
            scaled = (1 - s) * inv_p / 8 + s * inv_p;
            ++blended;
        } else {
            ++kept;
        }
        CHECK(inv_p / f[p] == Approx(scaled).epsilon(1e-6));
    }
    CHECK(kept > 0);
    CHECK(divided > 0);
    CHECK(blended > 0);
    CHECK_THROWS_AS(llama3_rope_factors(head, 500000.0f, 8.0, 4.0, 1.0, 8192.0), Error);
    CHECK_THROWS_AS(llama3_rope_factors(head, 500000.0f, 0.0, 1.0, 4.0, 8192.0), Error);
    CHECK_THROWS_AS(llama3_rope_factors(head, 500000.0f, 8.0, 1.0, 4.0, 0.0), Error);
}

TEST_CASE("CPU backend thread count: validated, and named in the device string", "[cpu_ops]") {
    CpuBackend be;
    CHECK(be.threads() == 1);
    CHECK(be.device() == "CPU, 1 thread");
    CHECK_THROWS_AS(be.set_threads(0), Error);
    be.set_reference_ops(true);
    CHECK(be.device() == "CPU, 1 thread, plain reference ops");
    be.set_reference_ops(false);
    be.set_threads(2);
    CHECK(be.device() == "CPU, 2 threads");
    CHECK_THROWS_AS(be.set_threads(257), Error);
}
