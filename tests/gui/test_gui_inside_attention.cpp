// What the inside-attention panel writes, without a display: the formula with a row's numbers,
// stage by stage, and the shapes in the tutorials' notation. The toy's
// row is built by hand from the tutorial (head "even" at "so": values 10, 20, 1, 5; scores
// −∞ / 0; weights 0.5 on "weather" and "so"; output 12.5).
#include <catch2/catch.hpp>

#include <cmath>

#include "gui/state/strings.h"
#include "gui/views/inside_attention_text.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

const float kInf = INFINITY;

AttentionExplain toy_even_at_so() {
    AttentionExplain e;
    e.step = 0;
    e.layer = 0;
    e.head = 0;
    e.kv_head = 0;
    e.heads_sharing_kv = {0, 1, 2, 3};
    e.row = 3;
    e.q_pos = 3;
    e.phase = Phase::Prefill;
    e.head_dim = 1;
    e.n_keys = 4;
    e.query_rows_computed = 4;
    e.query_rows_used = 4;
    e.scores_by_rule = true;
    e.k = {1, 2, 3, 4};
    e.v = {10, 20, 1, 5};
    e.source.assign(4, KvSource::New);
    e.raw = {-kInf, 0, -kInf, 0};
    e.scale = 1;
    e.scaled = e.raw;
    e.masked = {0, 0, 0, 0};
    e.weights = {0, 0.5f, 0, 0.5f};
    e.output = {12.5f};
    e.model_output = {12.5f};
    return e;
}

}  // namespace

TEST_CASE("inside attention: the toy's row writes the tutorial's numbers", "[gui][explain]") {
    set_language(Lang::En);
    const AttentionExplain e = toy_even_at_so();
    const ExplainLines L = explain_lines(e);
    CHECK(L.numbers == "= softmax([−∞, 0, −∞, 0] × 1 + mask)·V = [0, 0.5, 0, 0.5]·V = [12.5]");
    CHECK(L.number_parts == std::vector<std::string>{"= softmax([−∞, 0, −∞, 0] × 1 + mask)·V",
                                                     "= [0, 0.5, 0, 0.5]·V", "= [12.5]"});
    CHECK(L.scores == "Q [4, 1] · Kᵀ [1, 4] → scores [4, 4]; shown: the query at position 4");
    CHECK(L.output == "weights [1, 4] · V [4, 1] → output [1, 1]");
    CHECK(L.scale.find("rule") != std::string::npos);
    CHECK(L.gqa == "grouped-query attention: K/V head 0 is read by query heads 0, 1, 2, 3");
    const auto cols = explain_columns(e);
    REQUIRE(cols.size() == 8);
    CHECK(cols[0].name == "q");
    CHECK(cols[1].shape == "[4, 1]");
    CHECK(cols[7].name == "Σ_j w_j·v_j");

    // Head "even" at the first token: every key masked, no output.
    AttentionExplain none = e;
    none.q_pos = none.row = 0;
    none.n_keys = 1;
    none.k = {1};
    none.v = {10};
    none.raw = none.scaled = {-kInf};
    none.weights = {0};
    none.output.clear();
    none.empty_row = true;
    CHECK(explain_lines(none).numbers == "= softmax([−∞] × 1 + mask)·V = [0]·V = none");
}

TEST_CASE("inside attention: a decode row of a real model, with 1/√d_k and its shapes",
          "[gui][explain]") {
    set_language(Lang::En);
    AttentionExplain e;
    e.phase = Phase::Decode;
    e.head_dim = 64;
    e.n_keys = 12;
    e.query_rows_computed = 1;
    e.query_rows_used = 1;
    e.head = 5;
    e.kv_head = 2;
    e.heads_sharing_kv = {4, 5};
    e.scale = 0.125f;
    e.raw.assign(12, 2.0f);
    e.scaled.assign(12, 0.25f);
    e.weights.assign(12, 1.0f / 12);
    e.v.assign(12 * 64, 0.5f);
    e.output.assign(64, 0.5f);
    const ExplainLines L = explain_lines(e);
    CHECK(L.scores == "q [1, 64] · Kᵀ [64, 12] → scores [1, 12]");
    CHECK(L.output == "weights [1, 12] · V [12, 64] → output [1, 64]");
    CHECK(L.scale == "×1/√d_k = 1/√64 = 0.125");
    CHECK(L.gqa == "grouped-query attention: K/V head 2 is read by query heads 4, 5");
    // Twelve scores: the first three, an ellipsis, the last three.
    CHECK(L.numbers.rfind("= softmax([2, 2, 2, …, 2, 2, 2] × 0.125 + mask)·V = [0.08333, ", 0) ==
          0);
    // Without grouped-query attention, no GQA line.
    e.heads_sharing_kv = {5};
    CHECK(explain_lines(e).gqa.empty());
}

TEST_CASE("inside attention: the staged build shows no number before its stage", "[gui][explain]") {
    set_language(Lang::En);
    const AttentionExplain e = toy_even_at_so();
    // Stage by stage (from 0): nothing at q and K; the scores; the scaling; the mask; the
    // softmax's weights; ·V; the output. No piece names a later stage's numbers.
    CHECK(explain_number_parts(e, 0).empty());
    CHECK(explain_number_parts(e, 1) == std::vector<std::string>{"q·Kᵀ = [−∞, 0, −∞, 0]"});
    const auto two = explain_number_parts(e, 2);
    REQUIRE(two.size() == 2);
    CHECK(two[1] == "× 1 = [−∞, 0, −∞, 0]");
    for (int stage = 0; stage < 4; ++stage)
        for (const auto& part : explain_number_parts(e, stage)) {
            INFO("stage " << stage << ": " << part);
            CHECK(part.find("softmax") == std::string::npos);
            CHECK(part.find("0.5") == std::string::npos);   // the weights
            CHECK(part.find("12.5") == std::string::npos);  // the output
            CHECK((stage >= 3 || part.find("mask") == std::string::npos));
        }
    CHECK(explain_number_parts(e, 4).back() == "softmax → [0, 0.5, 0, 0.5]");
    CHECK(explain_number_parts(e, 5).back() == "·V");
    CHECK(explain_number_parts(e, 6).back() == "= [12.5]");
    CHECK(explain_number_parts(e, -1) == explain_lines(e).number_parts);
    // A masked key shows −∞ from the mask stage on.
    AttentionExplain m = e;
    m.raw = m.scaled = {1, 2, 3, 4};
    m.masked = {0, 0, 0, 1};
    CHECK(explain_number_parts(m, 3).back() == "+ mask = [1, 2, 3, −∞]");
    CHECK(explain_stage_note(m, 3).empty());  // the mask does something here
    // The mask stage that changes nothing says why: a decode row's keys all come before it, and
    // without the causal mask nothing is masked.
    AttentionExplain d = e;
    d.phase = Phase::Decode;
    CHECK(explain_stage_note(d, 3) ==
          "nothing to mask: the query is the newest token, every key comes before it");
    d.mask = AttentionMask::Bidirectional;
    CHECK(explain_stage_note(d, 3).find("without the causal mask") != std::string::npos);
    CHECK(explain_stage_note(d, 2).empty());
}

TEST_CASE("inside attention: numbers as the panel prints them", "[gui][explain]") {
    CHECK(fmt_number(-kInf) == "−∞");
    CHECK(fmt_number(-0.0f) == "0");
    CHECK(fmt_number(12.5f) == "12.5");
    CHECK(fmt_number(0.123456f) == "0.1235");
    const float v[] = {1, 2, 3};
    CHECK(fmt_vector(v) == "[1, 2, 3]");
    CHECK(fmt_vector(v, 2) == "[1, …, 3]");
}

TEST_CASE("inside attention: where q, k and v come from are the first stages, with their shapes",
          "[gui][explain][projection]") {
    set_language(Lang::En);
    // Fourteen stages: seven of the projections, then the arithmetic's seven, the softmax the
    // twelfth (from 1).
    CHECK(kExplainStages == 14);
    CHECK(kSoftmaxStage == 11);
    CHECK(attention_stage(-1) == -1);
    CHECK(attention_stage(kProjectionStages) == 0);
    for (int s = 0; s < kExplainStages; ++s) CHECK(is_projection_stage(s) == (s < 7));
    CHECK(std::string(explain_stage_name(attention_stage(kSoftmaxStage))) ==
          "softmax: the weights");
    ProjectionExplain pe;
    pe.dim = 128;
    pe.head_dim = 16;
    pe.cache_row = 7;
    CHECK(projection_stage_shape(pe, 0) == "x [1, 128]");
    CHECK(projection_stage_shape(pe, 1) == "[1, 128] → [1, 128]");
    for (int p : {2, 3, 4})
        CHECK(projection_stage_shape(pe, p) == "[1, 128] · [128, 16] → [1, 16]");
    CHECK(projection_stage_shape(pe, 5) == "[1, 16] → [1, 16]");
    CHECK(projection_stage_shape(pe, 6) == "K, V [1, 16] → cache row 8");
    CHECK(projection_numbers("q", {1.5f, -2.0f}, 8) == "q = [1.5, -2]");
    // Every stage named, in both languages.
    for (int p = 0; p < kProjectionStages; ++p) {
        INFO("stage " << p + 1);
        CHECK(std::string(projection_stage_name(p)) != "");
        CHECK(std::string(tr(projection_stage_name(p), Lang::Zh)) != "");
    }
    CHECK(std::string(tr(projection_stage_name(5), Lang::Zh)) == "RoPE 旋转 q 和 k");
    CHECK(std::string(tr(projection_stage_name(0), Lang::Zh)) != projection_stage_name(0));
}
