// Inside attention: one attention row rebuilt from the trace (core/session/attention_explain.h)
// must be the arithmetic the model did: softmax(q·k/√d_k + mask) equals the captured weights and
// Σ w·v equals the attention output the model used, on every backend, cached and uncached.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/loaders/model_loader.h"
#include "core/model/op_log.h"
#include "core/session/attention_explain.h"
#include "core/session/session.h"
#include "core/session/step_rows.h"
#include "core/session/workbench.h"
#include "kernels/backend_factory.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// Every layer, head and kept row of every step: the displayed numbers reproduce the model's.
void check_trace(const Session& s, const std::string& what) {
    const ModelConfig& c = s.model().config();
    for (const StepRecord& r : s.trace().steps()) {
        for (int l = 0; l < c.n_layers; ++l)
            for (int h = 0; h < c.n_heads; ++h)
                for (int row = 0; row < r.attention.rows; ++row) {
                    INFO(what << ": step " << r.index << " layer " << l << " head " << h << " row "
                              << row);
                    std::string why;
                    const auto e = explain_attention(s.trace(), c, r.index, l, h, row, &why);
                    INFO(why);
                    REQUIRE(e);
                    REQUIRE(softmax_error(*e) <= 1e-6);
                    REQUIRE(output_error(*e) <= 1e-5);
                    if (!e->scores_by_rule) {
                        // The shown raw scores are q . k of the shown vectors.
                        double dot = 0;
                        for (int i = 0; i < e->head_dim; ++i) dot += e->q[i] * e->k[i];
                        REQUIRE(std::fabs(dot - e->raw[0]) <= 1e-5 * (1 + std::fabs(dot)));
                    }
                }
    }
}

void run_model(const Model& m, const std::string& backend, CacheMode mode,
               const std::string& prompt, int decode_steps) {
    auto be = make_backend(backend);
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.max_new_tokens = decode_steps + 1;
    Session s(m, *be.backend, cfg);
    s.set_prompt(prompt);
    for (int i = 0; i <= decode_steps && !s.finished(); ++i) s.step();
    REQUIRE(s.trace().steps().size() >= 2);
    check_trace(s, m.name() + " on " + backend + ", " + mode_name(mode));
}

}  // namespace

TEST_CASE("explain: softmax of the shown scores is the weights, sum of w.v the output",
          "[explain]") {
    const std::vector<std::string> backends = {"cpu", "cuda-emulated"};
    auto toy = open_model("toy");
    auto def = open_model("default");
    std::unique_ptr<Model> stories;
    if (std::filesystem::exists(test::stories_model()))
        stories = open_model(test::stories_model(), test::stories_tokenizer());
    for (const auto& b : backends)
        for (CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
            run_model(*toy, b, mode, "Today weather is so", 2);
            run_model(*def, b, mode, "The cat sat on the", 3);
            if (stories) run_model(*stories, b, mode, "Once upon a time", 3);
        }
    if (!stories) WARN("stories260K not found under ../shared: checked the toy and default only");
}

TEST_CASE("explain: the toy's even head at 'so' is the tutorial's arithmetic", "[explain]") {
    auto toy = open_model("toy");
    auto be = make_backend("cpu");
    Session s(*toy, *be.backend);
    s.set_prompt("Today weather is so");
    s.step();
    std::string why;
    const auto e = explain_attention(s.trace(), toy->config(), 0, 0, 0, 3, &why);
    REQUIRE(e);
    CHECK(e->scores_by_rule);
    CHECK(e->q.empty());
    REQUIRE(e->n_keys == 4);
    const float inf = INFINITY;
    CHECK(e->raw == std::vector<float>{-inf, 0, -inf, 0});
    CHECK(e->weights == std::vector<float>{0, 0.5f, 0, 0.5f});
    CHECK(e->k == std::vector<float>{1, 2, 3, 4});
    CHECK(e->v == std::vector<float>{10, 20, 1, 5});
    CHECK(e->output == std::vector<float>{12.5f});
    CHECK(e->model_output == std::vector<float>{12.5f});
    for (KvSource src : e->source) CHECK(src == KvSource::New);
    const auto shown = softmax_of_shown(*e);
    CHECK(shown == std::vector<double>{0, 0.5, 0, 0.5});

    // "Today" under the even head: nothing to attend to.
    const auto none = explain_attention(s.trace(), toy->config(), 0, 0, 0, 0, &why);
    REQUIRE(none);
    CHECK(none->empty_row);
    CHECK(std::isnan(none->output[0]));
    CHECK(none->masked == std::vector<std::uint8_t>{0, 1, 1, 1});
}

TEST_CASE("explain: provenance and the why-not-Q counts, cached and uncached", "[explain]") {
    auto def = open_model("default");
    auto be = make_backend("cpu");
    SessionConfig cfg;
    cfg.max_new_tokens = 4;
    Session s(*def, *be.backend, cfg);
    s.set_prompt("The cat sat on the");
    const int P = s.prompt_len();
    const StepRecord& pre = s.step();
    CHECK(pre.query_rows_computed == P);
    CHECK(pre.query_rows_used == P);
    CHECK(pre.kv_rows_written == P);
    CHECK(pre.kv_rows_recomputed == 0);
    const StepRecord& d1 = s.step();  // cached
    CHECK(d1.query_rows_computed == 1);
    CHECK(d1.query_rows_used == 1);
    auto e = explain_attention(s.trace(), def->config(), 1, 0, 1, 0, nullptr);
    REQUIRE(e);
    REQUIRE(e->n_keys == P + 1);
    for (int j = 0; j < P; ++j) CHECK(e->source[j] == KvSource::Cached);
    CHECK(e->source[P] == KvSource::New);

    s.set_mode(CacheMode::Uncached);
    const StepRecord& d2 = s.step();
    CHECK(d2.query_rows_computed == P + 2);
    CHECK(d2.query_rows_used == 1);
    CHECK(d2.kv_rows_written == P + 2);
    CHECK(d2.kv_rows_recomputed == P + 1);
    // Measured by comparing: the recomputed rows equal what the cache held.
    CHECK(d2.kv_recomputed_max_delta >= 0);
    CHECK(d2.kv_recomputed_max_delta <= 1e-5);
    e = explain_attention(s.trace(), def->config(), 2, 1, 0, 0, nullptr);
    REQUIRE(e);
    for (int j = 0; j < P + 1; ++j) CHECK(e->source[j] == KvSource::Recomputed);
    CHECK(e->source[P + 1] == KvSource::New);
    CHECK(e->recomputed_max_delta == d2.kv_recomputed_max_delta);
}

TEST_CASE("explain: bad step, layer, head or row, and dropped payloads, say why", "[explain]") {
    auto def = open_model("default");
    auto be = make_backend("cpu");
    SessionConfig cfg;
    cfg.max_new_tokens = 3;
    Session s(*def, *be.backend, cfg);
    s.set_prompt("The cat");
    std::string why;
    CHECK_FALSE(explain_attention(s.trace(), def->config(), 0, 0, 0, 0, &why));
    CHECK(why == "no step has run yet");
    s.step();
    s.step();
    const ModelConfig& c = def->config();
    CHECK_FALSE(explain_attention(s.trace(), c, 2, 0, 0, 0, &why));
    CHECK(why.find("step 2 does not exist") == 0);
    CHECK_FALSE(explain_attention(s.trace(), c, 0, c.n_layers, 0, 0, &why));
    CHECK(why.find("layer") == 0);
    CHECK_FALSE(explain_attention(s.trace(), c, 0, 0, -1, 0, &why));
    CHECK(why.find("head -1") == 0);
    CHECK_FALSE(explain_attention(s.trace(), c, 1, 0, 0, 1, &why));
    CHECK(why.find("row 1 does not exist") == 0);
    // A budget of 0 drops every payload but the newest step's: the prefill's K/V rows are gone.
    s.trace().set_budget(0);
    CHECK_FALSE(explain_attention(s.trace(), c, 0, 0, 0, 0, &why));
    CHECK(why.find("dropped") != std::string::npos);
    CHECK_FALSE(explain_attention(s.trace(), c, 1, 0, 0, 0, &why));
    CHECK(why.find("the K/V row of position 1 (written at step 0) was dropped") == 0);
}

TEST_CASE("the mask: one rule for causal, bidirectional and a window with sinks", "[explain]") {
    const KeyMask causal{}, bidi{AttentionMask::Bidirectional};
    // Causal: itself and the keys before it; bidirectional: every key of the pass.
    CHECK(key_visible(causal, 3, 3, 0, 6));
    CHECK_FALSE(key_visible(causal, 3, 4, 0, 6));
    CHECK(key_visible(bidi, 3, 5, 0, 6));
    CHECK_FALSE(key_visible(bidi, 3, 6, 0, 6));  // past the pass's keys
    // A window of 3 rows and 2 sinks, a decode pass at index 10: of the 10 cached rows, 0..1
    // (the sinks) and 7..9 (the window); its own row; none after it.
    const KeyMask win{AttentionMask::Causal, 2, 3};
    std::vector<int> seen;
    for (int k = 0; k < 12; ++k)
        if (key_visible(win, 10, k, 10, 11)) seen.push_back(k);
    CHECK(seen == std::vector<int>{0, 1, 7, 8, 9, 10});
    // The rows the paged runner gathers under that window are the same ones.
    const CachedRowsSeen g = cached_rows_seen(win, 10);
    CHECK(g.sinks_end == 2);
    CHECK(g.from == 7);
    // A prompt in one pass sees itself whole (causally) whatever the window.
    for (int k = 0; k <= 5; ++k) CHECK(key_visible(win, 5, k, 0, 6));
    // Without a window every cached row is seen.
    CHECK(cached_rows_seen(causal, 10).from == 10);
}

TEST_CASE("which step holds a position: the step shown when it kept it, else the first",
          "[explain]") {
    std::vector<StepRecord> steps(3);
    steps[0].phase = Phase::Prefill;
    steps[0].attention.resize(1, 1, 4, 0);
    steps[0].kv.len = 4;
    for (int i : {1, 2}) {
        steps[i].phase = Phase::Decode;
        steps[i].attention.resize(1, 1, 1, 3 + i);
        steps[i].kv.len = 4 + i;
    }
    auto at = [&](int upto, int q) { return query_row_at(steps, upto, q); };
    REQUIRE(at(2, 2));
    CHECK(at(2, 2)->step == 0);
    CHECK(at(2, 2)->row == 2);
    CHECK(at(2, 5)->step == 2);
    CHECK(at(2, 5)->row == 0);
    CHECK(at(0, -1)->row == 3);  // newest row of the prefill
    CHECK(at(0, -1)->index == 3);
    CHECK(at(2, -1)->index == 5);
    CHECK_FALSE(at(1, 5));  // not computed yet at step 1
    CHECK_FALSE(query_row_at({}, 0, -1));
    // An uncached step that kept every row it computed holds them itself: the step shown stays.
    steps[2].attention.resize(1, 1, 6, 0);
    CHECK(at(2, 2)->step == 2);
    CHECK(at(2, 2)->row == 2);
    CHECK(at(1, 2)->step == 0);  // step 1 kept its newest row only
    CHECK(no_query_row_words(steps, 1, 2) ==
          "step 1 holds the query at position 5 only, not position 3 (step 0 computed it)");
    // A step whose payload was dropped still places its rows by rule (the views then say why);
    // one that still has its payload comes first.
    steps[1].drop_payload();
    CHECK(at(1, 4)->step == 1);
    steps[0].drop_payload();
    CHECK(at(2, 1)->step == 2);
    // Without the causal mask a row changes with every token: only the step itself holds it.
    steps[1].mask = AttentionMask::Bidirectional;
    CHECK_FALSE(at(1, 2));
}

namespace {

// Every kept row of every (step, layer, head): the block's row is the row's breakdown, number for
// number, and its mask is key_visible's for the step's mask.
void check_blocks(const Session& s, const std::string& what) {
    const ModelConfig& c = s.model().config();
    for (const StepRecord& r : s.trace().steps())
        for (int l = 0; l < c.n_layers; ++l)
            for (int h = 0; h < c.n_heads; ++h) {
                INFO(what << ": step " << r.index << " layer " << l << " head " << h);
                std::string why;
                const auto b = explain_attention_block(s.trace(), c, r.index, l, h, &why);
                INFO(why);
                REQUIRE(b);
                REQUIRE(b->rows == r.attention.rows);
                REQUIRE(b->n_keys == r.kv.len);
                for (int row = 0; row < b->rows; ++row) {
                    const auto e = explain_attention(s.trace(), c, r.index, l, h, row, nullptr);
                    REQUIRE(e);
                    for (int k = 0; k < b->n_keys; ++k) {
                        const std::size_t i = b->at(row, k);
                        CHECK(b->raw[i] == e->raw[k]);
                        CHECK(b->scaled[i] == e->scaled[k]);
                        CHECK(b->masked[i] == e->masked[k]);
                        CHECK(b->weights[i] == e->weights[k]);
                        CHECK(bool(b->masked[i]) ==
                              !key_visible(KeyMask{r.mask}, b->q_pos0 + row, k, r.pos0, b->n_keys));
                    }
                    if (!b->q.empty())
                        for (int d = 0; d < b->head_dim; ++d)
                            CHECK(b->q[std::size_t(row) * b->head_dim + d] == e->q[d]);
                }
            }
}

}  // namespace

TEST_CASE("explain: the matrix beside a row is the row's numbers, under the step's own mask",
          "[explain]") {
    auto def = open_model("default");
    auto toy = open_model("toy");
    auto be = make_backend("cpu");
    SessionConfig cfg;
    cfg.max_new_tokens = 3;
    cfg.keep_every_query_row = true;
    for (const Model* m : {def.get(), toy.get()})
        for (CacheView v : {CacheView::On, CacheView::Off, CacheView::Bidirectional}) {
            if (m->is_toy() && v == CacheView::Bidirectional) continue;
            Workbench w(*be.backend, cfg);
            w.set_view(v);
            w.open(std::shared_ptr<const Model>(m, [](const Model*) {}),
                   m->is_toy() ? "Today weather is so" : "Today's weather is so");
            for (int i = 0; i < 3; ++i) w.step();
            for (std::size_t i = 0; i < w.sessions(); ++i)
                check_blocks(w.session(i), m->name() + ", cache " + cache_view_name(v) +
                                               ", session " + std::to_string(i));
        }
    // Without the causal mask every row weighs the keys after it too: none is masked, and the
    // first row's weights past itself are the model's, not zeros.
    Workbench w(*be.backend, cfg);
    w.set_view(CacheView::Bidirectional);
    w.open(std::shared_ptr<const Model>(def.get(), [](const Model*) {}), "Today's weather is so");
    w.step();
    const auto b = explain_attention_block(w.session(1).trace(), def->config(), 0, 1, 0, nullptr);
    REQUIRE(b);
    CHECK(std::count(b->masked.begin(), b->masked.end(), 1) == 0);
    double after = 0;
    for (int k = 1; k < b->n_keys; ++k) after += b->weights[b->at(0, k)];
    CHECK(after > 0);
    // Its causal twin masks the upper triangle: T(T-1)/2 cells.
    const auto c = explain_attention_block(w.session(0).trace(), def->config(), 0, 1, 0, nullptr);
    REQUIRE(c);
    const int T = c->n_keys;
    CHECK(std::count(c->masked.begin(), c->masked.end(), 1) == T * (T - 1) / 2);
    // A stage shows only its own numbers: the weights at the softmax stage, none before it.
    CHECK(c->stage_value(1, 0, 1) == c->raw[c->at(0, 1)]);
    CHECK(c->stage_value(3, 0, 1) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(c->stage_value(4, 0, 1)));  // a masked cell has no weight
    CHECK(c->stage_value(4, 1, 0) == c->weights[c->at(1, 0)]);
}

TEST_CASE("an uncached step keeps every query row it computed where the views open them",
          "[explain]") {
    auto def = open_model("default");
    auto be = make_backend("cpu");
    for (bool every : {false, true}) {
        SessionConfig cfg;
        cfg.max_new_tokens = 4;
        cfg.mode = CacheMode::Uncached;
        cfg.keep_every_query_row = every;
        Session s(*def, *be.backend, cfg);
        s.set_prompt("Once upon a time");
        for (int i = 0; i < 4; ++i) s.step();
        const StepRecord& r = s.trace().steps()[3];
        INFO("keep every query row: " << every);
        CHECK(r.query_rows_computed == r.kv.len);
        CHECK(r.attention.rows == (every ? r.kv.len : 1));
        std::string why;
        const auto e = explain_query(s.trace(), def->config(), 3, 3, 0, 2, &why);
        INFO(why);
        CHECK(bool(e) == every);
        if (!e) {
            CHECK(why.find("not position 3 (step 0 computed it)") != std::string::npos);
            continue;
        }
        CHECK(e->step == 3);
        CHECK(e->q_pos == 2);
        CHECK(softmax_error(*e) <= 1e-6);
        CHECK(output_error(*e) <= 1e-5);
        // A causal row is the same whichever step computes it: the prefill's, to rounding.
        const auto p = explain_query(s.trace(), def->config(), 0, 3, 0, 2, nullptr);
        REQUIRE(p);
        for (int k = 0; k < p->n_keys; ++k) CHECK(e->weights[k] == Approx(p->weights[k]));
    }
}

TEST_CASE("op log: every op in order, counted FLOPs sum to the step's, calls measured",
          "[explain][ops]") {
    auto def = open_model("default");
    const ModelConfig& c = def->config();
    for (const std::string backend : {"cpu", "cuda-emulated"})
        for (bool by_token : {false, true}) {
            INFO(backend << (by_token ? ", token-by-token prefill" : ""));
            auto be = make_backend(backend);
            SessionConfig cfg;
            cfg.max_new_tokens = 2;
            cfg.prefill_token_by_token = by_token;
            Session s(*def, *be.backend, cfg);
            s.set_prompt("The cat sat on the");
            const int P = s.prompt_len();
            for (int i = 0; i < 2; ++i) {
                const StepRecord& r = s.step();
                const auto& ops = r.ops.ops;
                const int passes = r.forward_calls;
                // Per pass: embedding, 17 per layer, final norm, classifier; then sampling.
                REQUIRE(ops.size() == std::size_t(passes) * (1 + 17 * c.n_layers + 2) + 1);
                CHECK(ops.front().kind == OpKind::Embedding);
                CHECK(ops.back().kind == OpKind::Sampling);
                CHECK(ops.back().seconds >= 0);
                CHECK(r.ops.flops() == Approx(r.counts.flops).epsilon(1e-12));
                const int rows = r.phase == Phase::Decode || by_token ? 1 : P;
                for (std::size_t k = 0; k < ops.size(); ++k) {
                    const OpRecord& o = ops[k];
                    INFO("op " << k << " " << op_kind_name(o.kind));
                    if (o.kind == OpKind::QProj || o.kind == OpKind::FfnDown) {
                        CHECK(o.in.rows == rows);  // matrix . vector at decode
                        CHECK(o.out.features == c.dim);
                    }
                    if (o.kind == OpKind::KProj) CHECK(o.out.features == c.kv_dim());
                    if (o.call >= 0 || o.kind == OpKind::Sampling)
                        CHECK(o.seconds >= 0);  // measured
                    if (o.kind == OpKind::Softmax || o.kind == OpKind::WeightedSum) {
                        CHECK(o.seconds < 0);  // inside the fused attention kernel
                        REQUIRE(o.timed_with >= 0);
                        CHECK(ops[o.timed_with].kind == OpKind::Scores);
                    }
                }
            }
        }
}

TEST_CASE("explain payloads count against the trace budget and go first with old steps",
          "[explain][budget]") {
    auto def = open_model("default");
    auto be = make_backend("cpu");
    SessionConfig cfg;
    cfg.max_new_tokens = 12;
    Session s(*def, *be.backend, cfg);
    s.set_prompt("The cat sat on the");
    const StepRecord& pre = s.step();
    const ModelConfig& c = def->config();
    CHECK(pre.q_rows.size() == std::size_t(c.n_layers) * s.prompt_len() * c.dim);
    const std::size_t one_step = pre.payload_bytes();
    CHECK(one_step >= (pre.q_rows.capacity() + pre.attn_out.capacity()) * sizeof(float));
    s.trace().set_budget(one_step * 2);
    while (!s.finished()) s.step();
    CHECK(s.trace().payload_bytes() <= s.trace().budget());
    CHECK(s.trace().evicted_steps() > 0);
    std::size_t sum = 0;
    for (const StepRecord& r : s.trace().steps()) {
        sum += r.payload_bytes();
        if (r.payload_evicted) {
            CHECK(r.q_rows.empty());
            CHECK(r.attn_out.empty());
            CHECK(r.ops.ops.empty());
            CHECK(r.query_rows_computed > 0);  // the scalars stay
        }
    }
    CHECK(sum == s.trace().payload_bytes());
    CHECK_FALSE(s.trace().back().payload_evicted);
}
