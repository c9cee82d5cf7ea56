#include "tests/support/op_harness.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "core/model/fused_ops.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/relative_difference.h"
#include "tests/support/random_floats.h"

namespace kvs::test {
namespace {

using Bufs = std::vector<DeviceSpan>;
using Run = std::function<void(Backend&, Bufs&)>;
constexpr float kEps = 1e-5f;

std::string dims(std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : " x ") + std::to_string(x);
    return s;
}

std::size_t n(long long a, long long b = 1) {
    return static_cast<std::size_t>(a * b);
}

// The plain ops: each case runs the same call everywhere (the reference backend's loops are the
// reference).
void plain_ops(std::vector<OpCase>& t) {
    static const int tokens[3] = {3, 0, 10};
    t.push_back({"embed",
                 dims({3, 37}),
                 {n(3, 37), n(11, 37)},
                 {0},
                 0.0,
                 false,
                 [](Backend& be, Bufs& b) { be.embed(b[0], b[1], tokens, 3, 37); },
                 {}});
    for (auto [T, dim] : {std::pair{1, 37}, {7, 37}, {1, 300}, {3, 1030}})
        t.push_back({"rmsnorm",
                     dims({T, dim}),
                     {n(T, dim), n(T, dim), n(dim)},
                     {0},
                     1e-5,
                     false,
                     [=](Backend& be, Bufs& b) { be.rmsnorm(b[0], b[1], b[2], T, dim, kEps); },
                     {}});
    t.push_back({"layernorm",
                 dims({2, 37}),
                 {n(2, 37), n(2, 37), n(37), n(37)},
                 {0},
                 1e-5,
                 false,
                 [](Backend& be, Bufs& b) { be.layernorm(b[0], b[1], b[2], b[3], 2, 37, kEps); },
                 {}});
    struct Mm {
        int T, k, d;
    };
    for (Mm m : {Mm{1, 37, 53}, Mm{1, 300, 257}, Mm{7, 37, 53}, Mm{33, 64, 40}})
        t.push_back({"matmul",
                     dims({m.T, m.k}) + " -> " + std::to_string(m.d),
                     {n(m.T, m.d), n(m.T, m.k), n(m.d, m.k)},
                     {0},
                     1e-5,
                     false,
                     [=](Backend& be, Bufs& b) { be.matmul(b[0], b[1], b[2], m.T, m.k, m.d); },
                     {}});
    t.push_back({"rope",
                 "3 rows at 5, dim 60, kv 20, head 10",
                 {n(3, 60), n(3, 20), n(5)},
                 {0, 1},
                 1e-5,
                 false,
                 [](Backend& be, Bufs& b) { be.rope(b[0], b[1], 3, 5, 60, 20, 10, b[2]); },
                 {}});
    t.push_back({"kv_append",
                 "3 rows at 5, kv 20",
                 {n(10, 20), n(10, 20), n(3, 20), n(3, 20)},
                 {0, 1},
                 0.0,
                 false,
                 [](Backend& be, Bufs& b) { be.kv_append(b[0], b[1], b[2], b[3], 5, 3, 20); },
                 {}});
    struct Att {
        const char* what;
        int T, pos0, H, KVH, HD;
        bool causal;
    };
    for (Att a :
         {Att{"prefill", 7, 5, 6, 2, 10, true}, Att{"prefill, no mask", 7, 5, 6, 2, 10, false},
          Att{"decode, 3 chunks", 1, 149, 4, 2, 16, true}}) {
        const int keys = a.pos0 + a.T, dim = a.H * a.HD, kv = a.KVH * a.HD;
        t.push_back({std::string("attention ") + a.what,
                     std::to_string(a.T) + (a.T == 1 ? " row" : " rows") + " after " +
                         std::to_string(a.pos0) + ", " + std::to_string(a.H) + "/" +
                         std::to_string(a.KVH) + " heads of " + std::to_string(a.HD),
                     {n(a.T, dim), n(a.T, dim), n(keys, kv), n(keys, kv), n(a.H, a.T * keys)},
                     {0, 4},
                     1e-5,
                     false,
                     [=](Backend& be, Bufs& b) {
                         be.attention(b[0], b[1], b[2], b[3], b[4], a.T, a.pos0, a.H, a.KVH, a.HD,
                                      a.causal);
                     },
                     {}});
    }
    // A paged cache's ops through a block table out of order (5 blocks of 3 rows, 13 positions:
    // a partial last block), as vLLM's reshape_and_cache and paged_attention; the reference
    // gathers the rows first.
    static const std::vector<int> kBlocks = {3, 0, 4, 2, 1};
    const BlockTable table{kBlocks.data(), 5, 3};
    t.push_back({"kv_append_paged",
                 "3 rows at 10, kv 20, blocks of 3",
                 {n(15, 20), n(15, 20), n(3, 20), n(3, 20)},
                 {0, 1},
                 0.0,
                 false,
                 [=](Backend& be, Bufs& b) {
                     be.kv_append_paged(b[0], b[1], b[2], b[3], 10, 3, 20, table);
                 },
                 {}});
    for (Att a : {Att{"prefill", 4, 9, 6, 2, 10, true}, Att{"decode", 1, 12, 4, 2, 16, true}}) {
        const int dim = a.H * a.HD, kv = a.KVH * a.HD, keys = a.pos0 + a.T;
        PagedKeys pk;
        pk.table = table;
        t.push_back({std::string("attention_paged ") + a.what,
                     std::to_string(a.T) + (a.T == 1 ? " row" : " rows") + " after " +
                         std::to_string(a.pos0) + ", " + std::to_string(a.H) + "/" +
                         std::to_string(a.KVH) + " heads of " + std::to_string(a.HD) +
                         ", blocks of 3",
                     {n(a.T, dim), n(a.T, dim), n(15, kv), n(15, kv), n(a.H, a.T * keys)},
                     {0, 4},
                     1e-5,
                     false,
                     [=](Backend& be, Bufs& b) {
                         be.attention_paged(b[0], b[1], b[2], b[3], b[4], a.T, a.pos0, a.H, a.KVH,
                                            a.HD, a.causal, pk);
                     },
                     {}});
    }
    t.push_back({"swiglu",
                 "1000",
                 {1000, 1000},
                 {0},
                 1e-5,
                 false,
                 [](Backend& be, Bufs& b) { be.swiglu(b[0], b[1], 1000); },
                 {}});
    t.push_back({"gelu",
                 "1000",
                 {1000},
                 {0},
                 1e-5,
                 false,
                 [](Backend& be, Bufs& b) { be.gelu(b[0], 1000); },
                 {}});
    t.push_back({"add",
                 "1000",
                 {1000, 1000},
                 {0},
                 0.0,
                 false,
                 [](Backend& be, Bufs& b) { be.add(b[0], b[1], 1000); },
                 {}});
    t.push_back({"add_bias",
                 dims({3, 37}),
                 {n(3, 37), 37},
                 {0},
                 0.0,
                 false,
                 [](Backend& be, Bufs& b) { be.add_bias(b[0], b[1], 3, 37); },
                 {}});
}

// The fused decode kernels (core/model/fused_ops.h), each against the ops it is made of: on the
// reference backend, the reference; on the tested backend, the same bits.
void fused_ops(std::vector<OpCase>& t) {
    // Rows of 256 and 300 floats: a lane's sum runs over 2 or 3 chunks of 4, so an order changed
    // in one kernel changes its bits.
    const int dim = 256, kv = 64, hd = 16, pos = 5, cap = 8, hidden = 96, vocab = 100, wide = 300;
    t.push_back({"fused norm_qkv",
                 "dim 256, kv 64, head 16, at 5",
                 // x norm wq wk wv inv_freq q cache_k cache_v | xb k v
                 {n(dim), n(dim), n(dim, dim), n(kv, dim), n(kv, dim), n(hd / 2), n(dim),
                  n(cap, kv), n(cap, kv), n(dim), n(kv), n(kv)},
                 {6, 7, 8},
                 1e-5,
                 true,
                 [=](Backend& be, Bufs& b) {
                     FusedOps::NormQkv a{};
                     a.x = b[0], a.norm = b[1], a.wq = {b[2]}, a.wk = {b[3]}, a.wv = {b[4]};
                     a.inv_freq = b[5], a.q = b[6], a.cache_k = b[7], a.cache_v = b[8];
                     a.pos = pos, a.dim = dim, a.kv_dim = kv, a.head_dim = hd, a.eps = kEps;
                     be.fused()->norm_qkv(a);
                 },
                 [=](Backend& be, Bufs& b) {
                     be.rmsnorm(b[9], b[0], b[1], 1, dim, kEps);
                     be.matmul(b[6], b[9], b[2], 1, dim, dim);
                     be.matmul(b[10], b[9], b[3], 1, dim, kv);
                     be.matmul(b[11], b[9], b[4], 1, dim, kv);
                     be.rope(b[6], b[10], 1, pos, dim, kv, hd, b[5]);
                     be.kv_append(b[7], b[8], b[10], b[11], pos, 1, kv);
                 }});
    const int H = 4, KVH = 2, HD = 16, at = 149, keys = at + 1;
    t.push_back({"fused attention",
                 "1 row after 149, 4/2 heads of 16",
                 {n(H, HD), n(H, HD), n(keys, KVH * HD), n(keys, KVH * HD), n(H, keys)},
                 {0, 4},
                 1e-5,
                 true,
                 [=](Backend& be, Bufs& b) {
                     FusedOps::Attend a;
                     a.out = b[0], a.q = b[1], a.cache_k = b[2], a.cache_v = b[3], a.probs = b[4];
                     a.pos = at, a.n_heads = H, a.n_kv_heads = KVH, a.head_dim = HD;
                     be.fused()->attention(a);
                 },
                 [=](Backend& be, Bufs& b) {
                     be.attention(b[0], b[1], b[2], b[3], b[4], 1, at, H, KVH, HD, true);
                 }});
    t.push_back(
        {"fused matvec_add",
         "300 -> 48",
         {48, n(wide), n(48, wide), 48},
         {0},
         1e-5,
         true,
         [=](Backend& be, Bufs& b) { be.fused()->matvec_add(b[0], b[1], {b[2]}, wide, 48); },
         [=](Backend& be, Bufs& b) {
             be.matmul(b[3], b[1], b[2], 1, wide, 48);
             be.add(b[0], b[3], 48);
         }});
    t.push_back(
        {"fused norm_gate_up",
         "dim 300, hidden 96",
         {n(hidden), n(wide), n(wide), n(hidden, wide), n(hidden, wide), n(wide), n(hidden)},
         {0},
         1e-5,
         true,
         [=](Backend& be, Bufs& b) {
             be.fused()->norm_gate_up(b[0], b[1], b[2], {b[3]}, {b[4]}, wide, hidden, kEps);
         },
         [=](Backend& be, Bufs& b) {
             be.rmsnorm(b[5], b[1], b[2], 1, wide, kEps);
             be.matmul(b[0], b[5], b[3], 1, wide, hidden);
             be.matmul(b[6], b[5], b[4], 1, wide, hidden);
             be.swiglu(b[0], b[6], hidden);
         }});
    t.push_back({"fused norm_logits",
                 "dim 300, vocab 100",
                 {n(vocab), n(wide), n(wide), n(vocab, wide), n(wide)},
                 {0},
                 1e-5,
                 true,
                 [=](Backend& be, Bufs& b) {
                     be.fused()->norm_logits(b[0], b[1], b[2], {b[3]}, wide, vocab, kEps);
                 },
                 [=](Backend& be, Bufs& b) {
                     be.rmsnorm(b[4], b[1], b[2], 1, wide, kEps);
                     be.matmul(b[0], b[4], b[3], 1, wide, vocab);
                 }});
}

// The case's buffers on `be`, filled with the case's inputs, each between guard cells; `run` on
// them; the outputs back. A write outside any buffer (a guard cell changed) throws.
constexpr std::size_t kGuard = 256;
constexpr float kSentinel = -12345.0f;

std::vector<std::vector<float>> run_on(Backend& be, const OpCase& c, const Run& run, int salt) {
    std::vector<DeviceBuffer> bufs;
    Bufs spans;
    for (std::size_t i = 0; i < c.sizes.size(); ++i) {
        std::vector<float> v(c.sizes[i] + 2 * kGuard, kSentinel);
        const auto in = random_floats(c.sizes[i], std::uint32_t(97 * salt + i));
        std::copy(in.begin(), in.end(), v.begin() + kGuard);
        bufs.emplace_back(be, v.size());
        be.upload(bufs.back().span(), v.data(), v.size());
        spans.push_back({bufs.back().span().data + kGuard, c.sizes[i]});
    }
    run(be, spans);
    be.synchronize();
    for (std::size_t i = 0; i < bufs.size(); ++i) {
        std::vector<float> h(bufs[i].span().size);
        be.download(h.data(), bufs[i].span(), h.size());
        for (std::size_t g = 0; g < kGuard; ++g)
            if (h[g] != kSentinel || h[kGuard + c.sizes[i] + g] != kSentinel)
                throw std::runtime_error(c.op + " on " + be.name() + " wrote outside buffer " +
                                         std::to_string(i));
    }
    std::vector<std::vector<float>> out;
    for (int o : c.outputs) {
        std::vector<float> h(spans[o].size);
        be.download(h.data(), spans[o], h.size());
        out.push_back(std::move(h));
    }
    return out;
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].size() != b[i].size() ||
            std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
            return false;
    return true;
}

}  // namespace

std::vector<OpCase> op_table() {
    std::vector<OpCase> t;
    plain_ops(t);
    fused_ops(t);
    for (OpCase& c : t)
        if (!c.reference) c.reference = c.run;
    return t;
}

std::vector<OpVerdict> run_op_harness(const std::vector<OpImpl>& impls) {
    CpuBackend reference;
    reference.set_reference_ops(true);
    std::vector<OpVerdict> verdicts;
    std::printf("%-28s %-36s %-24s %10s %8s  %s\n", "op", "shape", "backend", "vs ref", "tol",
                "bits");
    const std::vector<OpCase> table = op_table();
    for (std::size_t i = 0; i < table.size(); ++i) {
        const OpCase& c = table[i];
        const int salt = static_cast<int>(i);
        const auto want = run_on(reference, c, c.reference, salt);
        std::map<std::string, std::vector<std::vector<float>>> got;
        for (const OpImpl& im : impls) {
            OpVerdict v{c.op, c.shape, im.name, 0, c.tolerance, "", true};
            if (c.fused && !im.backend->fused()) continue;  // no fused kernels: nothing to run
            if (im.around) im.around(true);
            const auto out = run_on(*im.backend, c, c.run, salt);
            got[im.name] = out;
            for (std::size_t o = 0; o < out.size(); ++o)
                v.difference = std::max(v.difference, relative_difference(out[o], want[o]));
            v.ok = v.difference <= c.tolerance;
            if (c.fused) {  // the op-by-op kernels it is built from, on the same backend
                const bool same = same_bits(out, run_on(*im.backend, c, c.reference, salt));
                v.bits = same ? "= its op-by-op kernels" : "DIFFERS from its op-by-op kernels";
                v.ok = v.ok && same;
            }
            if (!im.same_bits_as.empty()) {
                const bool same =
                    got.count(im.same_bits_as) && same_bits(out, got[im.same_bits_as]);
                v.bits += std::string(v.bits.empty() ? "" : "; ") +
                          (same ? "= " : "DIFFERS from ") + im.same_bits_as;
                v.ok = v.ok && same;
            }
            if (im.around) im.around(false);
            std::printf("%-28s %-36s %-24s %10.2e %8.0e  %s%s\n", c.op.c_str(), c.shape.c_str(),
                        im.name.c_str(), v.difference, c.tolerance, v.bits.c_str(),
                        v.ok ? "" : "  FAILED");
            verdicts.push_back(v);
        }
    }
    return verdicts;
}

}  // namespace kvs::test
