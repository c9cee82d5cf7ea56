#include "tests/support/mask_deltas.h"

#include <catch2/catch.hpp>

#include "core/session/workbench.h"

namespace kvs::test {

void check_mask_deltas(const Model& m, Backend& be, const std::string& prompt) {
    SessionConfig cfg;
    cfg.max_new_tokens = 3;
    Workbench wb(be, cfg);
    wb.set_view(CacheView::Bidirectional);
    // A Workbench shares its model: this one is the caller's, kept alive by it.
    wb.open(std::shared_ptr<const Model>(&m, [](const Model*) {}), prompt);
    REQUIRE(wb.sessions() == 2);
    wb.step();  // the prefill
    wb.step();  // one decode step: one token appended, every row recomputed
    const StepRecord& c = wb.session(0).trace().back();
    const StepRecord& b = wb.session(1).trace().back();
    const int L = m.config().n_layers;
    CHECK(c.mask == AttentionMask::Causal);
    CHECK(b.mask == AttentionMask::Bidirectional);
    CHECK(c.mode == CacheMode::Uncached);
    CHECK(b.mode == CacheMode::Uncached);
    REQUIRE(static_cast<int>(c.kv_delta_k.size()) == L);
    REQUIRE(static_cast<int>(b.kv_delta_k.size()) == L);
    for (int l = 0; l < L; ++l) {
        INFO("layer " << l);
        CHECK(c.kv_delta_k[l] == 0.0);
        CHECK(c.kv_delta_v[l] == 0.0);
        if (l == 0) {
            // Layer 0's K/V come from each token's embedding alone: no other token reaches them.
            CHECK(b.kv_delta_k[l] == 0.0);
            CHECK(b.kv_delta_v[l] == 0.0);
        } else {
            CHECK(b.kv_delta_k[l] > 1e-4);
            CHECK(b.kv_delta_v[l] > 1e-4);
        }
    }
    // The same sequence on both sides, and every row of the bidirectional step over every key:
    // the first query weighs the newest key.
    CHECK(wb.session(0).tokens() == wb.session(1).tokens());
    REQUIRE(b.attention.all_keys);
    REQUIRE(b.attention.rows == b.kv.len);
    CHECK(b.attention.row(L - 1, 0, 0).size() == std::size_t(b.kv.len));
    CHECK(b.attention.row(L - 1, 0, 0).back() > 0.0f);
    CHECK_FALSE(c.attention.all_keys);
    // Counted: the bidirectional pass also scores the keys after each query.
    CHECK(b.counts.attention_flops > c.counts.attention_flops);
}

}  // namespace kvs::test
