// The SIMD paths of the fast CPU ops (kernels/cpu/isa.h): KVSCOPE_ISA picks one or is refused in
// one line, and what holds between paths. Each path is tested against the reference ops and for
// bit-identity across batch sizes and threads in test_cpu_ops.cpp; across paths the sums are
// grouped differently (8 or 16 lanes; FMA on avx2 and avx512 only), so the paths agree to
// rounding, not bit for bit, except where an op has no sum and no multiply-add (add).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/util/error.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/reference_ops.h"
#include "tests/support/float_diff.h"
#include "tests/support/random_floats.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using cpu::Isa;
using test::max_abs_diff;
using test::random_floats;
using test::same_bits;

namespace {

std::string error_of(const char* requested, const std::vector<Isa>& have) {
    try {
        cpu::choose_isa(requested, have);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the widest path runs unless KVSCOPE_ISA names another this CPU has", "[simd]") {
    const std::vector<Isa> have = cpu::available_isas();
    REQUIRE(!have.empty());
    CHECK(cpu::choose_isa(nullptr, have) == have.back());
    CHECK(cpu::choose_isa("", have) == have.back());
    for (Isa isa : have) {
        CHECK(cpu::choose_isa(cpu::isa_name(isa), have) == isa);
        const cpu::Kernels* k = cpu::kernels_for(isa);
        REQUIRE(k != nullptr);
        CHECK(k->isa == isa);
        CHECK(k->lanes == (isa == Isa::avx512 ? 16 : 8));
    }
#if defined(__x86_64__)
    CHECK(have.front() == Isa::sse);  // baseline x86-64: every CPU runs it
    CHECK(cpu::kernels_for(Isa::plain) == nullptr);
#endif
    // The active path is one of them, and bench says which.
    CHECK(std::find(have.begin(), have.end(), cpu::active_isa()) != have.end());
    CHECK(cpu::simd_path_summary().find(cpu::isa_name(cpu::active_isa())) == 0);
}

TEST_CASE("KVSCOPE_ISA naming a path this CPU lacks, or no path, is refused in one line",
          "[simd]") {
#if defined(__x86_64__)
    const std::string lacks = error_of("avx512", {Isa::sse, Isa::avx2});
    CHECK(lacks == "KVSCOPE_ISA=avx512: this CPU lacks it (this CPU runs: sse, avx2)");
#endif
    const std::string unknown = error_of("avx1024", cpu::available_isas());
    CHECK(unknown.find("KVSCOPE_ISA=avx1024: unknown SIMD path") == 0);
    CHECK(unknown.find('\n') == std::string::npos);
    CHECK(error_of("AVX2", cpu::available_isas()) != "");  // names are exact
}

TEST_CASE("kvscope-cli refuses a bad KVSCOPE_ISA with one line and exit 2", "[simd]") {
    ::setenv("KVSCOPE_ISA", "avx1024", 1);
    const auto r = test::run_cli({"bench", "--limits", "--repeats", "1"});
    ::unsetenv("KVSCOPE_ISA");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());  // refused before any report line
    CHECK(r.err.find("KVSCOPE_ISA=avx1024: unknown SIMD path") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("the SIMD paths agree to rounding, add agrees bit for bit", "[simd]") {
    const std::vector<Isa> have = cpu::available_isas();
    const cpu::Kernels& widest = *cpu::kernels_for(have.back());
    // A layer's shapes, small: matmul [T, n] x [d, n]; attention with head_dim 40 (tails at 16)
    const int T = 7, n = 232, d = 72, n_heads = 4, n_kv = 2, head_dim = 40, pos0 = 50;
    const auto x = random_floats(std::size_t(T) * n, 1), w = random_floats(std::size_t(d) * n, 2);
    const int dim = n_heads * head_dim, kv_dim = n_kv * head_dim;
    const auto q = random_floats(std::size_t(T) * dim, 3, 2.0f);
    const auto kc = random_floats(std::size_t(pos0 + T) * kv_dim, 4, 2.0f);
    const auto vc = random_floats(std::size_t(pos0 + T) * kv_dim, 5);
    struct Outs {
        std::vector<float> mm, att, norm, swi, sum;
    };
    auto run = [&](const cpu::Kernels& k) {
        Outs o;
        o.mm.resize(std::size_t(T) * d);
        k.matmul(o.mm.data(), x.data(), w.data(), T, n, d, nullptr);
        std::vector<float> scratch;
        o.att.resize(std::size_t(T) * dim);
        k.attention(o.att.data(), q.data(), kc.data(), vc.data(), nullptr, T, pos0, n_heads, n_kv,
                    head_dim, nullptr, scratch, true);
        o.norm.resize(x.size());
        k.rmsnorm(o.norm.data(), x.data(), w.data(), T, n, 1e-5f);
        o.swi = x;
        k.swiglu(o.swi.data(), w.data(), o.swi.size());
        o.sum = x;
        k.add(o.sum.data(), w.data(), o.sum.size());
        return o;
    };
    const Outs ref = run(widest);
    for (Isa isa : have) {
        const Outs o = run(*cpu::kernels_for(isa));
        INFO(cpu::isa_name(isa) << " against " << cpu::isa_name(widest.isa) << ": matmul "
                                << max_abs_diff(o.mm, ref.mm) << ", attention "
                                << max_abs_diff(o.att, ref.att) << ", rmsnorm "
                                << max_abs_diff(o.norm, ref.norm) << ", swiglu "
                                << max_abs_diff(o.swi, ref.swi));
        // The tolerances each path meets against the reference ops (test_cpu_ops.cpp), doubled:
        // two paths are each that close to the reference.
        CHECK(max_abs_diff(o.mm, ref.mm) <= 2e-6 * n);
        CHECK(max_abs_diff(o.att, ref.att) <= 2e-5);
        CHECK(max_abs_diff(o.norm, ref.norm) <= 2e-6);
        CHECK(max_abs_diff(o.swi, ref.swi) <= 2e-6);
        CHECK(std::memcmp(o.sum.data(), ref.sum.data(), o.sum.size() * sizeof(float)) == 0);
    }
}
