// What the inside-attention panel writes, without a display: the formula with a row's numbers,
// the shapes in the tutorials' notation and which step a query row was computed at. The toy's
// row is built by hand from the tutorial (head "even" at "so": values 10, 20, 1, 5; scores
// −∞ / 0; weights 0.5 on "weather" and "so"; output 12.5).
#include <catch2/catch.hpp>

#include <cmath>

#include "gui/inside_attention.h"
#include "gui/strings.h"

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
    CHECK(L.scores == "Q [4, 1] · Kᵀ [1, 4] → scores [4, 4]; shown: row 3 (position 4)");
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

TEST_CASE("inside attention: a query position is found at the step that computed its row",
          "[gui][explain]") {
    std::vector<StepRecord> steps(3);
    steps[0].phase = Phase::Prefill;
    steps[0].attention.resize(1, 1, 4, 0);
    steps[0].kv.len = 4;
    for (int i : {1, 2}) {
        steps[i].phase = Phase::Decode;
        steps[i].attention.resize(1, 1, 1, 3 + i);
        steps[i].kv.len = 4 + i;
    }
    auto at = [&](int upto, int q) { return step_row_of(steps, upto, q); };
    REQUIRE(at(2, 2));
    CHECK(at(2, 2)->step == 0);
    CHECK(at(2, 2)->row == 2);
    CHECK(at(2, 5)->step == 2);
    CHECK(at(2, 5)->row == 0);
    CHECK(at(0, -1)->row == 3);  // newest row of the prefill
    CHECK(at(0, -1)->q_pos == 3);
    CHECK(at(2, -1)->q_pos == 5);
    CHECK_FALSE(at(1, 5));  // not computed yet at step 1
    CHECK_FALSE(step_row_of({}, 0, -1));
    // A step whose payload was dropped still places its rows (the panel then says why).
    steps[1].drop_payload();
    CHECK(at(2, 4)->step == 1);
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
