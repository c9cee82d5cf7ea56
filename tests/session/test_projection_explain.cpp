// Where q, K and V come from (core/session/projection_explain.h), the map of a step through the
// layers (core/session/step_map.h) and a weight matrix as a strip (core/model/weight_strip.h),
// each checked against numbers computed here from the model's own weights or from a session run
// the other way.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/loaders/model_loader.h"
#include "core/model/rope_frequencies.h"
#include "core/model/transformer_model.h"
#include "core/model/weight_strip.h"
#include "core/session/attention_explain.h"
#include "core/session/projection_explain.h"
#include "core/session/session.h"
#include "core/session/step_map.h"
#include "core/session/why_not_q.h"
#include "kernels/backend_factory.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// x_norm · W rows [first, first + n) in double: W is [rows, dim], row-major (llama2.c's layout).
std::vector<double> project(const std::vector<float>& x_norm, const float* w, int first, int n) {
    std::vector<double> out(n, 0.0);
    const std::size_t dim = x_norm.size();
    for (int i = 0; i < n; ++i)
        for (std::size_t j = 0; j < dim; ++j)
            out[i] += double(x_norm[j]) * w[(std::size_t(first) + i) * dim + j];
    return out;
}

// (angle) wrapped into (-π, π].
double wrapped(double a) {
    const double two_pi = 2 * std::numbers::pi;
    a = std::fmod(a, two_pi);
    if (a <= -std::numbers::pi) a += two_pi;
    if (a > std::numbers::pi) a -= two_pi;
    return a;
}

// Every layer, head and kept row of every step of `s`: the projections are the arithmetic of the
// model's weights, and their ends are what attention read.
void check_projections(const Session& s, const std::string& what) {
    const auto& m = dynamic_cast<const TransformerModel&>(s.model());
    const ModelConfig& c = m.config();
    const LlamaWeights& W = m.weights();
    const int hd = c.head_dim(), dim = c.dim, kv = c.kv_dim();
    const std::vector<float> inv_freq = rope_inverse_frequencies(c);
    int checked = 0;
    for (const StepRecord& r : s.trace().steps()) {
        for (int l = 0; l < c.n_layers; ++l)
            for (int h = 0; h < c.n_heads; ++h)
                for (int row = 0; row < r.attention.rows; ++row) {
                    INFO(what << ": step " << r.index << " layer " << l << " head " << h << " row "
                              << row);
                    std::string why;
                    const auto p = explain_projection(s.trace(), c, r.index, l, h, row, &why);
                    INFO(why);
                    REQUIRE(p);
                    const auto a = explain_attention(s.trace(), c, r.index, l, h, row, &why);
                    REQUIRE(a);
                    REQUIRE(p->q_pos == a->q_pos);
                    // Layer 0's input is the token's embedding row.
                    if (l == 0) {
                        const float* e =
                            W.token_embedding + std::size_t(s.tokens().at(p->q_pos)) * dim;
                        for (int i = 0; i < dim; ++i) REQUIRE(p->x[i] == e[i]);
                    }
                    // x_norm = x / sqrt(mean(x²) + eps) · the norm's weight.
                    const double inv = 1.0 / std::sqrt(p->x_rms * p->x_rms + c.norm_eps);
                    for (int i = 0; i < dim; ++i)
                        REQUIRE(p->x_norm[i] == Approx(p->x[i] * inv * W.norm_att[l * dim + i])
                                                    .epsilon(1e-4)
                                                    .margin(1e-6));
                    // q, k, v: x_norm times the head's rows of W_q, W_k, W_v.
                    REQUIRE(p->wq_first == h * hd);
                    REQUIRE(p->wk_first == (h / c.kv_mul()) * hd);
                    const auto q =
                        project(p->x_norm, W.wq + std::size_t(l) * dim * dim, p->wq_first, hd);
                    const auto k =
                        project(p->x_norm, W.wk + std::size_t(l) * kv * dim, p->wk_first, hd);
                    const auto v =
                        project(p->x_norm, W.wv + std::size_t(l) * kv * dim, p->wk_first, hd);
                    for (int i = 0; i < hd; ++i) {
                        REQUIRE(p->q[i] == Approx(q[i]).margin(1e-5));
                        REQUIRE(p->k[i] == Approx(k[i]).margin(1e-5));
                        REQUIRE(p->v[i] == Approx(v[i]).margin(1e-5));
                    }
                    // After RoPE: the q attention used, and the K/V row the cache holds at the
                    // token's position, which the query reads as its own key.
                    const std::size_t own = std::size_t(p->q_pos) * hd;
                    for (int i = 0; i < hd; ++i) {
                        REQUIRE(p->q_rope[i] == a->q[i]);
                        REQUIRE(p->k_rope[i] == a->k[own + i]);
                        REQUIRE(p->v[i] == a->v[own + i]);
                    }
                    REQUIRE(p->own == a->source[p->q_pos]);
                    // A rotation: lengths kept, each pair turned by position × ω.
                    REQUIRE(p->q_rope_len == Approx(p->q_len).epsilon(1e-5));
                    REQUIRE(p->k_rope_len == Approx(p->k_len).epsilon(1e-5));
                    for (int i = 0; i < hd / 2; ++i) {
                        const double want = wrapped(double(p->q_pos) * inv_freq[i]);
                        for (float got : {p->q_angle[i], p->k_angle[i]}) {
                            if (std::isnan(got)) continue;
                            REQUIRE(std::fabs(wrapped(got - want)) <= 1e-3);
                        }
                    }
                    // The keys the query reads, each from the cache, new or recomputed.
                    int cached = 0, fresh = 0, recomputed = 0;
                    for (int j = 0; j < a->n_keys; ++j) {
                        if (j == p->q_pos || a->masked[j]) continue;
                        cached += a->source[j] == KvSource::Cached;
                        fresh += a->source[j] == KvSource::New;
                        recomputed += a->source[j] == KvSource::Recomputed;
                    }
                    REQUIRE(p->read_cached == cached);
                    REQUIRE(p->read_new == fresh);
                    REQUIRE(p->read_recomputed == recomputed);
                    ++checked;
                }
    }
    REQUIRE(checked > 0);
}

std::unique_ptr<Session> run(const Model& m, Backend& be, CacheMode mode, int steps,
                             bool every_row = false) {
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.max_new_tokens = steps + 1;
    cfg.stop_at_end_token = false;
    cfg.keep_every_query_row = every_row;
    cfg.capture.projections = true;
    auto s = std::make_unique<Session>(m, be, cfg);
    s->set_prompt("the cat at the");
    for (int i = 0; i <= steps; ++i) s->step();
    return s;
}

}  // namespace

TEST_CASE(
    "projections: q, k and v are x_norm times the head's weight rows, RoPE turns them by "
    "position x omega keeping their length, and they end as the q and K/V rows attention "
    "read",
    "[explain][projection]") {
    const auto model = test::open_tiny_model("projection");
    for (const std::string backend : {"cpu", "cuda-emulated"}) {
        auto be = make_backend(backend);
        for (CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
            const auto s = run(*model, *be.backend, mode, 3, mode == CacheMode::Uncached);
            check_projections(*s, backend + ", " + mode_name(mode));
        }
    }
}

TEST_CASE("projections: the newest row by index, and what is missing says why",
          "[explain][projection]") {
    const auto model = test::open_tiny_model("projection");
    const ModelConfig& c = model->config();
    auto be = make_backend("cpu");
    const auto s = run(*model, *be.backend, CacheMode::Cached, 2);
    std::string why;
    const auto newest = explain_projection_query(s->trace(), c, 2, 1, 3, -1, &why);
    REQUIRE(newest);
    CHECK(newest->q_pos == s->trace().steps()[2].kv.len - 1);
    CHECK(newest->kv_head == 1);
    CHECK(newest->keys_read == newest->q_pos + 1);
    CHECK(newest->read_cached == newest->q_pos);  // a cached decode step: every earlier row read
    CHECK(newest->own == KvSource::New);
    CHECK_FALSE(explain_projection(s->trace(), c, 9, 0, 0, 0, &why));
    CHECK(why.find("step 9 does not exist") != std::string::npos);
    CHECK_FALSE(explain_projection(s->trace(), c, 0, 0, c.n_heads, 0, &why));
    CHECK(why.find("head 4 does not exist") != std::string::npos);
    // The toy's heads are rules: no projections.
    const auto toy = open_model("toy");
    Session t(*toy, *be.backend);
    t.set_prompt("Today weather is so");
    t.step();
    CHECK_FALSE(explain_projection(t.trace(), toy->config(), 0, 0, 0, 0, &why));
    CHECK(why.find("kept no projections") != std::string::npos);
}

TEST_CASE(
    "the map of a step: the way it ran matches its record, the other way matches a "
    "session run that way",
    "[explain][step map]") {
    const auto model = test::open_tiny_model("step_map");
    const int L = model->config().n_layers;
    auto be = make_backend("cpu");
    const auto cached = run(*model, *be.backend, CacheMode::Cached, 3);
    const auto uncached = run(*model, *be.backend, CacheMode::Uncached, 3);
    REQUIRE(cached->tokens() == uncached->tokens());
    for (std::size_t k = 0; k < cached->trace().steps().size(); ++k) {
        const StepRecord& rc = cached->trace().steps()[k];
        const StepRecord& ru = uncached->trace().steps()[k];
        INFO("step " << k);
        const StepMap mc = step_map(rc, L), mu = step_map(ru, L);
        REQUIRE(mc.layers.size() == std::size_t(L));
        CHECK(mc.len == rc.kv.len);
        CHECK(mc.joined.count == int(rc.new_tokens.size()));
        CHECK(mc.held_before + mc.joined.count == mc.len);
        const auto use_c = query_row_use(rc, L), use_u = query_row_use(ru, L);
        for (int l = 0; l < L; ++l) {
            INFO("layer " << l);
            // Counted from the cached step's shapes, each way is the session that ran it.
            for (const StepMap* m : {&mc, &mu}) {
                const LayerMap& lm = m->layers[l];
                CHECK(lm.cached.queries.count == use_c[l].computed);
                CHECK(lm.cached.use.for_output == use_c[l].for_output);
                CHECK(lm.cached.use.build_next_kv == use_c[l].build_next_kv);
                CHECK(lm.cached.use.thrown_away == use_c[l].thrown_away);
                CHECK(lm.uncached.queries.count == use_u[l].computed);
                CHECK(lm.uncached.use.rebuild_next_kv == use_u[l].rebuild_next_kv);
                CHECK(lm.uncached.use.thrown_away == use_u[l].thrown_away);
                CHECK(lm.uncached.kv_recomputed.count == ru.kv_rows_recomputed);
                CHECK(lm.cached.kv_read.count == m->held_before);
                CHECK(lm.cached.kv_written.count + lm.cached.kv_read.count == rc.kv.len);
                // The why-not-Q chain: with the cache no layer needs an earlier token's query;
                // without it every layer below the last needs them all, the last needs one.
                CHECK(lm.cached.queries_needed ==
                      lm.cached.queries.count - lm.cached.use.thrown_away);
                const int uncached_needed = l < L - 1 ? ru.tokens_processed : 1;
                CHECK(lm.uncached.queries_needed == uncached_needed);
            }
            // The uncached step measured its recomputed rows against the ones held.
            if (k > 0) {
                CHECK(mu.layers[l].uncached.kv_delta == kv_recomputed_delta(ru, l));
                CHECK(mu.layers[l].uncached.kv_delta >= 0);
            }
            CHECK(mc.layers[l].cached.kv_delta == -1);
        }
    }
}

TEST_CASE("a weight strip is the head's rows of W_q, W_k or W_v, averaged in blocks when wide",
          "[explain][weight strip]") {
    const auto model = test::open_tiny_model("strip");
    const auto& m = dynamic_cast<const TransformerModel&>(*model);
    const ModelConfig& c = m.config();
    const int hd = c.head_dim(), dim = c.dim, kv = c.kv_dim();
    std::string why;
    for (MatrixKind kind : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv}) {
        const int head = 3, layer = 1;
        const int rows_of = kind == MatrixKind::wq ? dim : kv;
        const float* w = (kind == MatrixKind::wq   ? m.weights().wq
                          : kind == MatrixKind::wk ? m.weights().wk
                                                   : m.weights().wv) +
                         std::size_t(layer) * rows_of * dim;
        const int first = (kind == MatrixKind::wq ? head : head / c.kv_mul()) * hd;
        const auto full = weight_strip(m, kind, layer, head, 1000, &why);
        REQUIRE(full);
        CHECK(full->first_row == first);
        CHECK(full->block == 1);
        REQUIRE(full->cols == dim);
        float abs_max = 0;
        for (int r = 0; r < hd; ++r)
            for (int j = 0; j < dim; ++j) {
                CHECK(full->cells[r * dim + j] == w[(first + r) * dim + j]);
                abs_max = std::max(abs_max, std::fabs(w[(first + r) * dim + j]));
            }
        CHECK(full->abs_max == abs_max);
        const auto narrow = weight_strip(m, kind, layer, head, 5, &why);
        REQUIRE(narrow);
        CHECK(narrow->block == 4);  // 16 weights a row into at most 5 cells
        REQUIRE(narrow->cols == 4);
        for (int r = 0; r < hd; ++r)
            for (int col = 0; col < 4; ++col) {
                double sum = 0;
                for (int j = col * 4; j < col * 4 + 4; ++j) sum += w[(first + r) * dim + j];
                CHECK(narrow->cells[r * 4 + col] == Approx(sum / 4).margin(1e-7));
            }
    }
    CHECK_FALSE(weight_strip(m, MatrixKind::wq, c.n_layers, 0, 8, &why));
    CHECK(why.find("does not exist") != std::string::npos);
    CHECK_FALSE(weight_strip(m, MatrixKind::w1, 0, 0, 8, &why));
    CHECK_FALSE(weight_strip(*open_model("toy"), MatrixKind::wq, 0, 0, 8, &why));
    CHECK(why.find("keeps no weights") != std::string::npos);
}

TEST_CASE(
    "explain --json carries the projection, the map and the sampling stages, --show prints "
    "each, sampling reshaped by --temperature and --top-k",
    "[explain][projection][cli]") {
    const std::vector<std::string> base = {
        "explain", "--model", "default", "--backend", "cpu",    "--prompt", "The cat sat",
        "--step",  "2",       "--layer", "1",         "--head", "2"};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> args = base;
        args.insert(args.end(), more.begin(), more.end());
        return test::run_cli(args);
    };
    const auto r = with({"--temperature", "2", "--top-k", "5", "--top-p", "1", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    // Where q came from ends as the q the row's scores used; its own K row is the key at its
    // position.
    const auto& p = j.at("projection");
    REQUIRE(p.at("q_rope") == j.at("q"));
    const int pos = p.at("q_pos");
    CHECK(p.at("k_rope") == j.at("keys").at(pos).at("k"));
    CHECK(p.at("v") == j.at("keys").at(pos).at("v"));
    CHECK(double(p.at("q_len")) == Approx(double(p.at("q_rope_len"))).epsilon(1e-5));
    REQUIRE(j.at("weights").size() == 3);
    CHECK(j.at("weights").at(0).at("matrix") == "W_q");
    // The map: every layer, the step ran cached.
    const auto& map = j.at("map");
    CHECK(map.at("ran") == "cached");
    REQUIRE(map.at("layers").size() == std::size_t(open_model("default")->config().n_layers));
    CHECK(map.at("layers").at(0).at("cached").at("kv_read").at("count") == map.at("held_before"));
    // Sampling at T = 2, top-k 5: five tokens with mass, summing to 1, the drawn one among them
    // and the step's next token.
    const auto& s = j.at("sampling");
    CHECK(s.at("temperature") == 2.0);
    CHECK(s.at("kept_top_k") == 5);
    double total = 0;
    int with_mass = 0;
    bool drawn_listed = false;
    for (const auto& e : s.at("entries")) {
        total += double(e.at("p_final"));
        with_mass += double(e.at("p_final")) > 0;
        drawn_listed |= e.at("id") == s.at("drawn") && double(e.at("p_final")) > 0;
        CHECK(double(e.at("p_tempered")) <= 1.0);
    }
    CHECK(total == Approx(1.0).epsilon(1e-5));
    CHECK(with_mass == 5);
    CHECK(drawn_listed);
    // Text: each part, and one line for a part that is not there.
    const auto proj = with({"--show", "projection"});
    CHECK(proj.exit_code == 0);
    CHECK(proj.out.find("q = x_norm . W_q^T") != std::string::npos);
    CHECK(proj.out.find("RoPE at position") != std::string::npos);
    const auto mp = with({"--show", "map"});
    CHECK(mp.exit_code == 0);
    CHECK(mp.out.find("without the cache") != std::string::npos);
    const auto sm = with({"--show", "sampling", "--temperature", "2", "--top-k", "5"});
    CHECK(sm.exit_code == 0);
    CHECK(sm.out.find("<- drawn") != std::string::npos);
    CHECK(sm.out.find("top-k 5 (kept 5)") != std::string::npos);
    const auto bad = with({"--show", "everything"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--show") != std::string::npos);
    const auto toy = test::run_cli({"explain", "--model", "toy", "--show", "projection"});
    CHECK(toy.exit_code == 2);
    CHECK(toy.err.find("kept no projections") != std::string::npos);
}
