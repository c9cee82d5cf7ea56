// What the window keeps between frames, against the same thing made from scratch: the KV grid's
// texels (extended and capped at KvTexels::kMaxColumns), the Time panel's running sums and the K/V
// bytes lines, the comparison that dashes a line, and the token strip's chips made one by one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/loaders/model_loader.h"
#include "core/model/kv_what_if.h"
#include "core/session/session.h"
#include "gui/views/kv_grid.h"
#include "gui/views/time_series.h"
#include "gui/views/token_chips.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

// A cache of `len` tokens whose values are a function of (layer, kv, position, channel), so
// caches of different lengths agree on the positions they share: [n_layers, 2, len, kv_dim].
struct SyntheticCache {
    KvShape kv;
    std::vector<float> rows;
};
SyntheticCache synthetic_cache(int len) {
    SyntheticCache c;
    c.kv.n_layers = 2;
    c.kv.capacity = 1 << 16;
    c.kv.len = len;
    c.kv.n_kv_heads = 1;
    c.kv.head_dim = 3;
    const int d = 3;
    c.rows.resize(std::size_t(2) * 2 * len * d);
    for (int l = 0; l < 2; ++l)
        for (int k = 0; k < 2; ++k)
            for (int p = 0; p < len; ++p)
                for (int ch = 0; ch < d; ++ch)
                    c.rows[((std::size_t(l) * 2 + k) * len + p) * d + ch] =
                        std::sin(0.37f * p + 1.3f * ch + 0.5f * k + l) * (1 + (p % 7 == 3) * 4);
    return c;
}

}  // namespace

TEST_CASE("the KV grid's texels extended as the cache grows equal the texels made at once",
          "[gui][kv]") {
    const Rgba missing{1, 2, 3, 255};
    KvTexels grown;
    // Past 1,024 tokens the stride doubles; lengths that fill a block part way, and that shrink.
    for (int len : {1, 5, 700, 1024, 1025, 1031, 2049, 3000, 3001, 5000, 4990, 4097}) {
        const SyntheticCache c = synthetic_cache(len);
        const KvGridColumns g = kv_columns_of_cache(c.kv, c.rows, len - 1, len, len - 1);
        update_kv_texels(grown, g, 1, missing, 9);
        CHECK(kv_texels_current(grown, g, 9));
        CHECK(grown.cols == len);
        CHECK(grown.stride == kv_texel_stride(len));
        CHECK(grown.cap <= KvTexels::kMaxColumns);
        // From scratch at the colour scale the key began with: each texel column its block, the
        // columns past the grid missing.
        const int h = 2 * g.kv_dim, s = grown.stride;
        std::vector<Rgba> whole(std::size_t(grown.cap) * h, missing);
        for (int t = 0; t * s < len; ++t)
            kv_block_pixels(g, 1, t * s, std::min(len, (t + 1) * s), grown.scale, missing,
                            whole.data() + std::size_t(t) * h);
        CHECK(grown.px == whole);
    }
    // A grid without its columns (kv_grid_shape) of the size held: nothing to do.
    KvGridColumns shape;
    shape.n = 4097;
    shape.kv_dim = 3;
    CHECK(kv_texels_current(grown, shape, 9));
    CHECK_FALSE(update_kv_texels(grown, shape, 1, missing, 9).restarted);
    shape.n = 4098;
    CHECK_FALSE(kv_texels_current(grown, shape, 9));
    shape.n = 4097;
    CHECK_FALSE(kv_texels_current(grown, shape, 10));  // another key
}

TEST_CASE("a long cache's grid is at most 1,024 texel columns, each its block's largest value",
          "[gui][kv]") {
    const Rgba missing{1, 2, 3, 255};
    const int len = 32768;
    const SyntheticCache c = synthetic_cache(len);
    const KvGridColumns g = kv_columns_of_cache(c.kv, c.rows, len - 1, len, len - 1);
    KvTexels t;
    update_kv_texels(t, g, 0, missing, 1);
    CHECK(kv_texel_stride(len) == 32);
    CHECK(t.stride == 32);
    CHECK(t.cap == KvTexels::kMaxColumns);
    CHECK(kv_texel_stride(1024) == 1);
    CHECK(kv_texel_stride(1025) == 2);
    // Texel column 5 holds positions 160..191: each channel the value of largest |value|.
    const int h = 2 * g.kv_dim;
    for (int kv = 0; kv < 2; ++kv)
        for (int ch = 0; ch < g.kv_dim; ++ch) {
            float best = 0;
            for (int p = 160; p < 192; ++p) {
                const float v = kv_value(g, 0, kv, p, ch);
                if (std::fabs(v) > std::fabs(best)) best = v;
            }
            CHECK(t.px[std::size_t(5) * h + kv * g.kv_dim + ch] == signed_colour(best, t.scale));
        }
    // One position a texel: exactly the column's pixels.
    std::vector<Rgba> col(h), block(h);
    kv_column_pixels(g, 0, 7, t.scale, missing, col.data());
    kv_block_pixels(g, 0, 7, 8, t.scale, missing, block.data());
    CHECK(col == block);
}

TEST_CASE("the Time panel's running sums and K/V bytes equal the sums over the steps",
          "[gui][time]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat in the hat");
    for (int i = 0; i < 6; ++i) s.step();
    std::vector<StepRecord> steps(s.trace().steps().begin(), s.trace().steps().end());
    const ModelConfig& c = test::shared_tiny_model().config();
    TimeSeries grown;
    for (std::size_t n = 0; n <= steps.size(); ++n) {
        const std::span<const StepRecord> first(steps.data(), n);
        update_time_series(grown, 3, test::shared_tiny_model(), CacheMode::Cached, first);
        // From scratch, as the table summed them: every step up to the one shown.
        double flops = 0, decode = 0, ttft = NAN;
        int n_dec = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const StepRecord& r = steps[k];
            flops += r.counts.flops;
            if (r.phase == Phase::Prefill)
                ttft = r.wall_seconds;
            else
                decode += r.wall_seconds, ++n_dec;
            CHECK(grown.flops_total[k] == flops);
            CHECK(grown.decode_total[k] == decode);
            CHECK(grown.decode_steps[k] == n_dec);
            CHECK((std::isnan(ttft) ? std::isnan(grown.first_token[k])
                                    : grown.first_token[k] == ttft));
            CHECK(grown.cache_bytes[k] == double(r.kv.bytes()));
            CHECK(grown.mqa_bytes[k] == double(kv_bytes_per_token(c, 1)) * r.kv.len);
            CHECK(grown.mha_bytes[k] == double(kv_bytes_per_token(c, c.n_heads)) * r.kv.len);
        }
        CHECK(grown.flops_total.size() == n);
    }
    // The last step read again after the engine filled it in.
    steps.back().wall_seconds += 1.0;
    const double before = grown.decode_total.back();
    update_time_series(grown, 3, test::shared_tiny_model(), CacheMode::Cached, steps);
    CHECK(grown.decode_total.back() == Approx(before + 1.0));
    // Starting over is a new epoch.
    const std::uint64_t epoch = grown.epoch;
    update_time_series(grown, 4, test::shared_tiny_model(), CacheMode::Cached, steps);
    CHECK(grown.epoch == epoch + 1);
}

TEST_CASE("two sessions' K/V bytes compared as they grow agree with comparing them whole",
          "[gui][time]") {
    CpuBackend b1, b2, b3;
    SessionConfig cu;
    cu.mode = CacheMode::Uncached;
    Session a(test::shared_tiny_model(), b1, cu), b(test::shared_tiny_model(), b2, cu),
        cached(test::shared_tiny_model(), b3);
    for (Session* s : {&a, &b, &cached}) {
        s->set_prompt("the cat sat");
        for (int i = 0; i < 5; ++i) s->step();
    }
    const auto check_pair = [](const std::vector<StepRecord>& x, const std::vector<StepRecord>& y,
                               std::size_t ny_lag) {
        TimeSeries tx, ty;
        SeriesAgreement m;
        for (std::size_t n = 0; n <= x.size(); ++n) {
            const std::size_t my = n > ny_lag ? n - ny_lag : 0;
            update_time_series(tx, 1, test::shared_tiny_model(), CacheMode::Uncached,
                               std::span(x.data(), n));
            update_time_series(ty, 1, test::shared_tiny_model(), CacheMode::Uncached,
                               std::span(y.data(), my));
            CHECK(same_kv_bytes(m, tx, ty) == (tx.kv_bytes == ty.kv_bytes));
        }
        // The last step held changes (filled in since): compared again.
        std::vector<StepRecord> y2 = y;
        y2.back().counts.kv_read_bytes += 8;
        update_time_series(ty, 1, test::shared_tiny_model(), CacheMode::Uncached, y2);
        CHECK(same_kv_bytes(m, tx, ty) == (tx.kv_bytes == ty.kv_bytes));
        CHECK_FALSE(same_kv_bytes(m, tx, ty));
        // Started over with other steps: compared from the start.
        update_time_series(ty, 2, test::shared_tiny_model(), CacheMode::Uncached, x);
        update_time_series(tx, 2, test::shared_tiny_model(), CacheMode::Uncached, x);
        CHECK(same_kv_bytes(m, tx, ty));
    };
    const std::vector<StepRecord> sa(a.trace().steps().begin(), a.trace().steps().end());
    const std::vector<StepRecord> sb(b.trace().steps().begin(), b.trace().steps().end());
    const std::vector<StepRecord> sc(cached.trace().steps().begin(), cached.trace().steps().end());
    check_pair(sa, sb, 0);
    check_pair(sa, sb, 1);
    check_pair(sa, sc, 0);
}

TEST_CASE("the token strip's chips made one by one are the sequence after the step shown",
          "[gui][tokens]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat");
    const int P = s.prompt_len();
    const std::vector<int> prompt(s.tokens().begin(), s.tokens().begin() + P);
    for (int i = 0; i < 4; ++i) s.step();
    const auto& steps = s.trace().steps();
    for (int shown = -1; shown < static_cast<int>(steps.size()); ++shown) {
        // From scratch, as the strip built its list each frame: the prompt, each step's token,
        // the newest outlined, then the positions step `shown` fed in marked.
        std::vector<TokenChip> list;
        for (int p = 0; p < P; ++p)
            list.push_back({p, prompt[p], -1, shown < 0 ? ChipKind::Pending : ChipKind::Prompt});
        for (int k = 0; k <= shown; ++k)
            list.push_back({P + k, steps[k].token_out, k,
                            k == shown ? ChipKind::Chosen : ChipKind::Generated});
        const int in_begin = shown < 0 ? -1 : shown == 0 ? 0 : steps[shown].kv.len - 1;
        const int in_end = shown < 0 ? -1 : steps[shown].kv.len;
        for (TokenChip& c : list) c.going_in = c.pos >= in_begin && c.pos < in_end;
        REQUIRE(token_chip_count(P, shown) == static_cast<int>(list.size()));
        for (int k = 0; k < token_chip_count(P, shown); ++k) {
            const TokenChip c = token_chip(prompt, steps, shown, k);
            CHECK(c.pos == list[k].pos);
            CHECK(c.id == list[k].id);
            CHECK(c.step == list[k].step);
            CHECK(c.kind == list[k].kind);
            CHECK(c.going_in == list[k].going_in);
        }
    }
}

TEST_CASE("the KV grid's shape is the collected grid without its columns", "[gui][kv]") {
    CpuBackend be;
    Session s(test::shared_tiny_model(), be);
    s.set_prompt("the cat sat");
    for (int i = 0; i < 3; ++i) s.step();
    for (int k = -1; k <= 3; ++k) {
        const KvGridColumns whole = collect_kv_columns(s.trace().steps(), k);
        const KvGridColumns shape = kv_grid_shape(s.trace().steps(), k);
        CHECK(shape.cols.empty());
        CHECK(shape.n == whole.n);
        CHECK(shape.n_layers == whole.n_layers);
        CHECK(shape.kv_dim == whole.kv_dim);
        CHECK(shape.head_dim == whole.head_dim);
        CHECK(shape.written_begin == whole.written_begin);
        CHECK(shape.written_end == whole.written_end);
        CHECK(shape.query_pos == whole.query_pos);
        // Without columns no value is read.
        if (shape.n > 0) CHECK(std::isnan(kv_value(shape, 0, 0, 0, 0)));
    }
}
