// The attention kernels reading a paged KV cache in place through its block table
// (attention.cuh's key_row, as vLLM's paged_attention kernel), run by the emulated launches:
// the contiguous kernel's bits on shuffled tables, and a paged runner on the cuda-emulated
// backend that copies no K/V rows together (counted: copies, not times; no GPU here).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <tuple>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/serving/scheduler.h"
#include "core/session/session.h"
#include "core/util/splitmix64.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/reference_ops.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/serving/serving_fixtures.h"
#include "tests/support/random_floats.h"

using namespace kvs;
using test::random_floats;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Blocks 0..n-1 in a shuffled order (never the identity for n > 1).
std::vector<int> shuffled_blocks(int n, std::uint64_t seed) {
    std::vector<int> t(n);
    std::iota(t.begin(), t.end(), 0);
    std::uint64_t s = seed;
    for (int i = n - 1; i > 0; --i) std::swap(t[i], t[splitmix64_next(s) % (i + 1)]);
    if (n > 1 && std::is_sorted(t.begin(), t.end())) std::swap(t[0], t[1]);
    return t;
}

struct Shape {
    int n_heads, n_kv_heads, head_dim, T, pos0, block_size;
    int sinks = 0, skip = 0;
    bool moved_sinks = false;  // the sinks' K from a buffer of their own (sink_k)
};

struct Outputs {
    std::vector<float> out, probs;
};

// Attention of s.T queries over s.pos0 + s.T keys: contiguous (the keys' rows gathered, in key
// order) or paged (the same rows where a shuffled table puts them, the other rows NaN).
Outputs run(const Shape& s, bool paged, std::uint32_t seed) {
    EmulatedCudaBackend be;
    const int dim = s.n_heads * s.head_dim, kv = s.n_kv_heads * s.head_dim;
    const int n_keys = s.pos0 + s.T, last = n_keys - 1 + (n_keys > s.sinks ? s.skip : 0);
    const int n_blocks = last / s.block_size + 1, pool_rows = (n_blocks + 2) * s.block_size;
    const std::vector<float> q = random_floats(std::size_t(s.T) * dim, seed);
    const std::vector<float> k = random_floats(std::size_t(n_keys) * kv, seed + 1);
    const std::vector<float> v = random_floats(std::size_t(n_keys) * kv, seed + 2);
    const std::vector<float> moved =
        random_floats(std::size_t(std::max(s.sinks, 1)) * kv, seed + 3);
    std::vector<float> keys_k = k;  // contiguous: the moved sinks' K in the first rows
    if (s.moved_sinks)
        std::copy(moved.begin(), moved.begin() + std::size_t(s.sinks) * kv, keys_k.begin());
    DeviceBuffer dq(be, q.size()), dout(be, q.size());
    DeviceBuffer dprobs(be, std::size_t(s.n_heads) * s.T * n_keys);
    be.upload(dq.span(), q.data(), q.size());
    std::vector<int> table = shuffled_blocks(n_blocks + 2, seed + 4);
    table.resize(n_blocks);
    PagedKeys keys;
    keys.table = {table.data(), n_blocks, s.block_size};
    keys.sinks = s.sinks;
    keys.skip = s.skip;
    DeviceBuffer dk, dv, dsink;
    if (paged) {
        std::vector<float> pk(std::size_t(pool_rows) * kv, NAN), pv = pk;
        for (int key = 0; key < n_keys; ++key) {
            const std::size_t row = keys.row(key);
            std::copy_n(k.begin() + std::size_t(key) * kv, kv, pk.begin() + row * kv);
            std::copy_n(v.begin() + std::size_t(key) * kv, kv, pv.begin() + row * kv);
        }
        dk = DeviceBuffer(be, pk.size());
        dv = DeviceBuffer(be, pv.size());
        be.upload(dk.span(), pk.data(), pk.size());
        be.upload(dv.span(), pv.data(), pv.size());
        if (s.moved_sinks) {
            dsink = DeviceBuffer(be, std::size_t(s.sinks) * kv);
            be.upload(dsink.span(), moved.data(), dsink.size());
            keys.sink_k = dsink.span();
        }
        be.attention_paged(dout.span(), dq.span(), dk.span(), dv.span(), dprobs.span(), s.T, s.pos0,
                           s.n_heads, s.n_kv_heads, s.head_dim, true, keys);
    } else {
        dk = DeviceBuffer(be, keys_k.size());
        dv = DeviceBuffer(be, v.size());
        be.upload(dk.span(), keys_k.data(), keys_k.size());
        be.upload(dv.span(), v.data(), v.size());
        be.attention(dout.span(), dq.span(), dk.span(), dv.span(), dprobs.span(), s.T, s.pos0,
                     s.n_heads, s.n_kv_heads, s.head_dim, true);
        // The CPU reference judges the contiguous kernel (and so the paged one, bit for bit).
        std::vector<float> ref(q.size()), got(q.size());
        ref::attention(ref.data(), q.data(), keys_k.data(), v.data(), nullptr, s.T, s.pos0,
                       s.n_heads, s.n_kv_heads, s.head_dim, true);
        be.download(got.data(), dout.span(), got.size());
        for (std::size_t i = 0; i < ref.size(); ++i) CHECK(std::fabs(ref[i] - got[i]) < 1e-5f);
    }
    Outputs o{std::vector<float>(dout.size()), std::vector<float>(dprobs.size())};
    be.download(o.out.data(), dout.span(), o.out.size());
    be.download(o.probs.data(), dprobs.span(), o.probs.size());
    return o;
}

}  // namespace

TEST_CASE("paged attention kernel: the contiguous kernel's bits on shuffled block tables",
          "[emulated][paged]") {
    std::vector<Shape> shapes;
    // GQA 4 over 2, 8 over 1 (MQA), 2 over 2; decode (T = 1: split, then combine) and prefill
    // (T > 1: flash) past one chunk of 64 keys; block sizes that leave a partial last block.
    for (int bs : {1, 3, 4, 16})
        for (auto [h, kvh, d] : {std::tuple{4, 2, 8}, std::tuple{8, 1, 4}, std::tuple{2, 2, 6}}) {
            shapes.push_back({h, kvh, d, 1, 69, bs});
            shapes.push_back({h, kvh, d, 5, 70, bs});
            shapes.push_back({h, kvh, d, 3, 0, bs});
        }
    // A window past its sinks (positions 0..2, then 13..), the sinks' K moved or read in place.
    shapes.push_back({4, 2, 8, 1, 40, 4, 3, 10, true});
    shapes.push_back({4, 2, 8, 4, 40, 5, 3, 10, false});
    std::uint32_t seed = 1;
    for (const Shape& s : shapes) {
        INFO("heads " << s.n_heads << "/" << s.n_kv_heads << " x " << s.head_dim << ", T " << s.T
                      << ", pos0 " << s.pos0 << ", block size " << s.block_size << ", sinks "
                      << s.sinks << " skip " << s.skip);
        const Outputs a = run(s, false, seed), b = run(s, true, seed);
        CHECK(same_bits(a.out, b.out));
        CHECK(same_bits(a.probs, b.probs));
        seed += 10;
    }
}

TEST_CASE("paged attention kernel: a table that names the wrong block changes the output",
          "[emulated][paged]") {
    // The check above can fail: the paged rows are placed by a table, and the kernel is handed
    // another one (the first two blocks swapped).
    EmulatedCudaBackend be;
    const int h = 4, kvh = 2, d = 8, kv = kvh * d, bs = 4, n_keys = 12;
    const std::vector<float> q = random_floats(h * d, 5), pk = random_floats(4 * bs * kv, 6),
                             pv = random_floats(4 * bs * kv, 7);
    DeviceBuffer dq(be, q.size()), dk(be, pk.size()), dv(be, pv.size()), o1(be, q.size()),
        o2(be, q.size());
    be.upload(dq.span(), q.data(), q.size());
    be.upload(dk.span(), pk.data(), pk.size());
    be.upload(dv.span(), pv.data(), pv.size());
    std::vector<int> right{2, 0, 3}, wrong{0, 2, 3};
    PagedKeys keys;
    keys.table = {right.data(), 3, bs};
    be.attention_paged(o1.span(), dq.span(), dk.span(), dv.span(), DeviceSpan{}, 1, n_keys - 1, h,
                       kvh, d, true, keys);
    keys.table.blocks = wrong.data();
    be.attention_paged(o2.span(), dq.span(), dk.span(), dv.span(), DeviceSpan{}, 1, n_keys - 1, h,
                       kvh, d, true, keys);
    std::vector<float> a(q.size()), b(q.size());
    be.download(a.data(), o1.span(), a.size());
    be.download(b.data(), o2.span(), b.size());
    CHECK_FALSE(same_bits(a, b));
}

namespace {

// One decode step of the serving model on the cuda-emulated backend after a prompt of
// prompt_len tokens, counted: on a paged cache of blocks of block_size rows (a shuffled table),
// or (block_size 0) on a contiguous one.
LaunchCounts decode_counts(int block_size, int prompt_len) {
    const Model& m = test::serving_model();
    const ModelConfig& c = m.config();
    EmulatedCudaBackend be;
    be.set_graphs_on(false);  // op by op, as a paged pass always runs
    be.set_fused_on(false);
    const int n_blocks = block_size > 0 ? c.seq_len / block_size + 1 : 1;
    KvBlockPool pool(be, c.n_layers, n_blocks, std::max(block_size, 1), c.kv_dim());
    auto runner = block_size > 0 ? m.make_paged_runner(be, 1, pool) : m.make_batch_runner(be, 1);
    const std::vector<int> table = shuffled_blocks(n_blocks, 9);
    std::vector<int> tokens = test::serving_ids(4, prompt_len + 2);
    Capture none;  // nothing kept: the logits only
    none.attention = none.kv_rows = none.vectors = none.op_log = false;
    ForwardResult r;
    if (block_size > 0) runner->set_blocks(0, table, 0);
    const SeqInput prefill{0, std::span<const int>(tokens.data(), prompt_len)};
    runner->forward_batch(std::span<const SeqInput>(&prefill, 1), none,
                          std::span<ForwardResult>(&r, 1));
    // Two decode steps, the second counted (the first grows decode attention's scratch).
    for (int pos = prompt_len; pos < prompt_len + 2; ++pos) {
        if (block_size > 0) runner->set_blocks(0, table, pos);
        be.reset_counts();
        const SeqInput decode{0, std::span<const int>(tokens.data() + pos, 1)};
        runner->forward_batch(std::span<const SeqInput>(&decode, 1), none,
                              std::span<ForwardResult>(&r, 1));
    }
    return be.counts();
}

}  // namespace

TEST_CASE("a paged decode step on cuda-emulated copies no K/V row, whatever the table",
          "[emulated][paged][counts]") {
    // Counted per decode token: the contiguous cache's launches (per layer one K/V append, two
    // attention kernels) and its device-to-device copies (none); the block table taken to the
    // device twice a layer (the append's and the attention's: 2 L host-to-device copies more).
    // A gather through the table would add 2 copies per block per layer, a store by copies 2 a
    // layer.
    const int L = test::serving_model().config().n_layers;
    for (auto [bs, len] : {std::pair{1, 40}, std::pair{4, 37}, std::pair{16, 20}}) {
        INFO("block size " << bs << ", " << len << " cached rows");
        const LaunchCounts flat = decode_counts(0, len), paged = decode_counts(bs, len);
        std::printf(
            "decode token after %d rows: contiguous %d launches, %d D2D, %d H2D; paged "
            "(block size %d) %d launches, %d D2D, %d H2D\n",
            len, flat.launches, flat.d2d, flat.h2d, bs, paged.launches, paged.d2d, paged.h2d);
        CHECK(paged.launches == flat.launches);
        CHECK(paged.d2d == 0);
        CHECK(flat.d2d == 0);
        CHECK(paged.h2d == flat.h2d + 2 * L);
        CHECK(paged.allocs == 0);
    }
}

TEST_CASE("serve on cuda-emulated: every text is generate's on that backend",
          "[emulated][paged][serving]") {
    const std::vector<std::vector<int>> prompts = test::shared_prefix_prompts();
    const int max_new = 8;
    EmulatedCudaBackend be;
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = max_new;
    Scheduler s(test::serving_model(), be, cfg);
    for (const auto& p : prompts) s.submit(p);
    while (!s.finished()) s.step();
    const std::vector<ServeRequest> served = s.requests();
    REQUIRE(served.size() == prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        INFO("request " << i);
        EmulatedCudaBackend alone_be;
        SessionConfig sc;
        sc.max_new_tokens = max_new;
        Session alone(test::serving_model(), alone_be, sc);
        alone.set_prompt_tokens(prompts[i]);
        while (!alone.finished()) alone.step();
        CHECK(served[i].tokens == alone.tokens());
    }
}

TEST_CASE("a paged op without a table or with a block size of 0 is a kvs::Error on every backend",
          "[paged]") {
    std::vector<float> pool(64, 0.0f), row(4, 1.0f), out(4), probs(16);
    const int blocks[2] = {1, 0};
    const DeviceSpan P{pool.data(), pool.size()}, R{row.data(), row.size()};
    const DeviceSpan O{out.data(), out.size()}, Pr{probs.data(), probs.size()};
    CpuBackend cpu;
    EmulatedCudaBackend emu;
    for (Backend* be : {static_cast<Backend*>(&cpu), static_cast<Backend*>(&emu)}) {
        INFO(be->name());
        for (const BlockTable& t : {BlockTable{blocks, 2, 0}, BlockTable{nullptr, 2, 4},
                                    BlockTable{blocks, 0, 4}, BlockTable{blocks, -1, 4}}) {
            CHECK_THROWS_AS(be->kv_append_paged(P, P, R, R, 0, 1, 4, t), Error);
            PagedKeys keys;
            keys.table = t;
            CHECK_THROWS_AS(be->attention_paged(O, R, P, P, Pr, 1, 0, 1, 1, 4, true, keys), Error);
        }
        PagedKeys negative;
        negative.table = BlockTable{blocks, 2, 4};
        negative.skip = -1;
        CHECK_THROWS_AS(be->attention_paged(O, R, P, P, Pr, 1, 0, 1, 1, 4, true, negative), Error);
    }
}
