// Every CUDA kernel, run through the CPU emulator over its real launch shape, against the CPU
// backend's op: sizes that leave partial blocks and tiles (T = 7, dim = 37, ...), guard cells
// around every output (a missing bounds check writes into them), and both thread orders within a
// phase (a kernel that reads what another thread writes in the same phase gives different bits).
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

using namespace kvs;

namespace {

constexpr std::size_t kGuard = 1 << 14;  // past a whole stray tile or block of rows
constexpr float kSentinel = -12345.0f;

// A host array with sentinel cells on both sides. Both backends keep tensors in host memory, so
// the same array can be handed to either as a DeviceSpan.
class Guarded {
  public:
    Guarded(std::size_t n, std::uint32_t seed, bool random = true)
        : n_(n), v_(n + 2 * kGuard, kSentinel) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (std::size_t i = 0; i < n; ++i) v_[kGuard + i] = random ? u(rng) : kSentinel;
    }
    DeviceSpan span() { return {v_.data() + kGuard, n_}; }
    std::vector<float> values() const {
        return {v_.begin() + kGuard, v_.begin() + static_cast<std::ptrdiff_t>(kGuard + n_)};
    }
    bool guards_intact() const {
        for (std::size_t i = 0; i < kGuard; ++i)
            if (v_[i] != kSentinel || v_[kGuard + n_ + i] != kSentinel) return false;
        return true;
    }

  private:
    std::size_t n_;
    std::vector<float> v_;
};

// Runs `op` (which fills outputs from fresh inputs) on the CPU backend and on the emulated CUDA
// backend in both thread orders; returns the outputs of each, output by output.
struct Outputs {
    std::vector<std::vector<float>> cpu, emu, emu_reverse;
};
using OpRun = std::function<std::vector<std::vector<float>>(Backend&)>;

Outputs run_all(const OpRun& op) {
    CpuBackend cpu;
    EmulatedCudaBackend emu_be;
    Outputs o;
    o.cpu = op(cpu);
    emu::set_thread_order(emu::ThreadOrder::Forward);
    o.emu = op(emu_be);
    emu::set_thread_order(emu::ThreadOrder::Reverse);
    o.emu_reverse = op(emu_be);
    emu::set_thread_order(emu::ThreadOrder::Forward);
    return o;
}

void check_matches(const OpRun& op) {
    const Outputs o = run_all(op);
    REQUIRE(o.cpu.size() == o.emu.size());
    for (std::size_t k = 0; k < o.cpu.size(); ++k) {
        INFO("output " << k);
        CHECK(relative_difference(o.emu[k], o.cpu[k]) <= 1e-5);
        CHECK(o.emu[k] == o.emu_reverse[k]);  // same bits whatever the order within a phase
    }
}

}  // namespace

TEST_CASE("emulated embed gathers the rows of the CPU backend", "[emulated][kernels]") {
    for (int T : {1, 7, 19}) {
        for (int dim : {37, 300}) {
            INFO("T=" << T << " dim=" << dim);
            const int vocab = 23;
            std::vector<int> tokens(T);
            for (int t = 0; t < T; ++t) tokens[t] = (t * 7 + 3) % vocab;
            check_matches([&](Backend& be) {
                Guarded table(std::size_t(vocab) * dim, 1), x(std::size_t(T) * dim, 2, false);
                be.embed(x.span(), table.span(), tokens.data(), T, dim);
                CHECK(x.guards_intact());
                return std::vector<std::vector<float>>{x.values()};
            });
        }
    }
}

TEST_CASE("emulated rmsnorm matches the CPU backend", "[emulated][kernels]") {
    for (int T : {1, 7}) {
        for (int dim : {1, 37, 300}) {
            INFO("T=" << T << " dim=" << dim);
            check_matches([&](Backend& be) {
                Guarded x(std::size_t(T) * dim, 3), w(dim, 4), out(std::size_t(T) * dim, 5, false);
                be.rmsnorm(out.span(), x.span(), w.span(), T, dim, dim == 37 ? 1e-6f : 1e-5f);
                CHECK(out.guards_intact());
                return std::vector<std::vector<float>>{out.values()};
            });
        }
    }
}

TEST_CASE("emulated layernorm matches the CPU backend's ref::layernorm", "[emulated][kernels]") {
    // dim 1: a zero variance (out = b); 37 and 300: rows shorter than the block and not a multiple
    // of it. offset moves every x away from 0, so the mean is large next to the spread (the case a
    // one-pass E[x^2] - mean^2 gets wrong); in_place writes the output over x.
    for (int T : {1, 7}) {
        for (int dim : {1, 37, 300}) {
            for (float offset : {0.0f, 20.0f}) {
                for (bool in_place : {false, true}) {
                    INFO("T=" << T << " dim=" << dim << " offset=" << offset
                              << " in_place=" << in_place);
                    check_matches([&](Backend& be) {
                        const std::size_t n = std::size_t(T) * dim;
                        Guarded x(n, 26), w(dim, 27), b(dim, 28), out(n, 29, false);
                        for (std::size_t i = 0; i < n; ++i) x.span().data[i] += offset;
                        Guarded& dst = in_place ? x : out;
                        be.layernorm(dst.span(), x.span(), w.span(), b.span(), T, dim,
                                     dim == 37 ? 1e-6f : 1e-5f);
                        CHECK(dst.guards_intact());
                        CHECK(w.guards_intact());
                        CHECK(b.guards_intact());
                        return std::vector<std::vector<float>>{dst.values()};
                    });
                }
            }
        }
    }
}

TEST_CASE("emulated matmul (tiled and matrix-vector) matches the CPU backend",
          "[emulated][kernels]") {
    struct Case {
        int T, n, d;
    };
    // T == 1 takes the matrix-vector kernel; the rest the tiled one, with partial tiles in T, n, d.
    for (Case c : {Case{1, 37, 53}, Case{1, 300, 513}, Case{1, 5, 1}, Case{7, 37, 53},
                   Case{19, 64, 1}, Case{33, 300, 17}, Case{2, 15, 16}}) {
        INFO("T=" << c.T << " n=" << c.n << " d=" << c.d);
        check_matches([&](Backend& be) {
            Guarded x(std::size_t(c.T) * c.n, 6), w(std::size_t(c.d) * c.n, 7),
                out(std::size_t(c.T) * c.d, 8, false);
            be.matmul(out.span(), x.span(), w.span(), c.T, c.n, c.d);
            CHECK(out.guards_intact());
            return std::vector<std::vector<float>>{out.values()};
        });
    }
}

TEST_CASE("emulated RoPE matches the CPU backend, GQA-narrow k included", "[emulated][kernels]") {
    struct Case {
        int T, pos0, n_heads, n_kv_heads, head_dim;
    };
    for (Case c : {Case{1, 0, 4, 2, 8}, Case{7, 11, 5, 1, 6}, Case{3, 40, 27, 9, 10}}) {
        const int dim = c.n_heads * c.head_dim, kv_dim = c.n_kv_heads * c.head_dim;
        INFO("T=" << c.T << " pos0=" << c.pos0 << " dim=" << dim << " kv_dim=" << kv_dim);
        check_matches([&](Backend& be) {
            Guarded q(std::size_t(c.T) * dim, 9), k(std::size_t(c.T) * kv_dim, 10),
                inv_freq(c.head_dim / 2, 11);  // any table: the kernel reads it as given
            be.rope(q.span(), k.span(), c.T, c.pos0, dim, kv_dim, c.head_dim, inv_freq.span());
            CHECK(q.guards_intact());
            CHECK(k.guards_intact());
            return std::vector<std::vector<float>>{q.values(), k.values()};
        });
    }
}

TEST_CASE("emulated KV append writes the same cache rows as the CPU backend",
          "[emulated][kernels]") {
    for (int T : {1, 7}) {
        const int kv_dim = 37, capacity = 20, pos0 = 5;
        INFO("T=" << T);
        check_matches([&](Backend& be) {
            Guarded ck(std::size_t(capacity) * kv_dim, 11), cv(std::size_t(capacity) * kv_dim, 12);
            Guarded k(std::size_t(T) * kv_dim, 13), v(std::size_t(T) * kv_dim, 14);
            be.kv_append(ck.span(), cv.span(), k.span(), v.span(), pos0, T, kv_dim);
            CHECK(ck.guards_intact());
            CHECK(cv.guards_intact());
            return std::vector<std::vector<float>>{ck.values(), cv.values()};
        });
    }
}

TEST_CASE("emulated attention (prefill and decode) matches the CPU backend, probs included",
          "[emulated][kernels]") {
    struct Case {
        int T, pos0, n_heads, n_kv_heads, head_dim;
    };
    // T == 1 takes the decode kernel (a block per kv head group). n_keys 1, 7, 12, 41, 201 and
    // 169: fewer and more keys than the 128 threads of a block.
    for (Case c : {Case{1, 0, 6, 2, 10}, Case{7, 0, 6, 2, 10}, Case{7, 5, 6, 3, 10},
                   Case{1, 40, 6, 1, 10}, Case{1, 200, 4, 4, 6}, Case{19, 150, 2, 1, 6}}) {
        const int dim = c.n_heads * c.head_dim, kv_dim = c.n_kv_heads * c.head_dim;
        const int n_keys = c.pos0 + c.T, capacity = n_keys + 3;
        for (bool with_probs : {false, true})
            for (bool causal : {true, false}) {
                INFO("T=" << c.T << " pos0=" << c.pos0 << " heads=" << c.n_heads << "/"
                          << c.n_kv_heads << " head_dim=" << c.head_dim << " probs=" << with_probs
                          << " causal=" << causal);
                check_matches([&](Backend& be) {
                    Guarded q(std::size_t(c.T) * dim, 15), out(std::size_t(c.T) * dim, 16, false);
                    Guarded ck(std::size_t(capacity) * kv_dim, 17),
                        cv(std::size_t(capacity) * kv_dim, 18);
                    Guarded probs(with_probs ? std::size_t(c.n_heads) * c.T * n_keys : 0, 19,
                                  false);
                    be.attention(out.span(), q.span(), ck.span(), cv.span(), probs.span(), c.T,
                                 c.pos0, c.n_heads, c.n_kv_heads, c.head_dim, causal);
                    CHECK(out.guards_intact());
                    CHECK(probs.guards_intact());
                    return std::vector<std::vector<float>>{out.values(), probs.values()};
                });
            }
    }
}

TEST_CASE("emulated SwiGLU and residual add match the CPU backend", "[emulated][kernels]") {
    for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1000)}) {
        INFO("n=" << n);
        check_matches([&](Backend& be) {
            Guarded h1(n, 20), h3(n, 21);
            be.swiglu(h1.span(), h3.span(), n);
            CHECK(h1.guards_intact());
            return std::vector<std::vector<float>>{h1.values()};
        });
        check_matches([&](Backend& be) {
            Guarded x(n, 22), y(n, 23);
            be.add(x.span(), y.span(), n);
            CHECK(x.guards_intact());
            return std::vector<std::vector<float>>{x.values()};
        });
    }
}

TEST_CASE("emulated GELU matches the CPU backend's ref::gelu", "[emulated][kernels]") {
    // n 1, 37 and 1000: one partial block, four blocks with a partial last. scale 8 takes values
    // out to where tanh saturates (gelu(h) ~ h above, ~ 0 below).
    for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1000)}) {
        for (float scale : {1.0f, 8.0f}) {
            INFO("n=" << n << " scale=" << scale);
            check_matches([&](Backend& be) {
                Guarded h(n, 30);
                for (std::size_t i = 0; i < n; ++i) h.span().data[i] *= scale;
                be.gelu(h.span(), n);
                CHECK(h.guards_intact());
                return std::vector<std::vector<float>>{h.values()};
            });
        }
    }
}

TEST_CASE("emulated bias add (every row += b) matches the CPU backend", "[emulated][kernels]") {
    for (int T : {1, 3, 7})
        for (int n : {1, 37, 300}) {
            INFO("T=" << T << " n=" << n);
            check_matches([&](Backend& be) {
                Guarded x(std::size_t(T) * n, 24), b(n, 25);
                be.add_bias(x.span(), b.span(), T, n);
                CHECK(x.guards_intact());
                CHECK(b.guards_intact());
                return std::vector<std::vector<float>>{x.values()};
            });
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
