// What the Next token panel's stages and the map of a step draw, without a display: the
// sampling view is core's sampling_stages field by field (and a preview at other settings is the
// same function without a draw, reshaped), the map's cells are core's step_map, a point in a
// column is that column's layer, and the keys that move the sampler and open the map.
#include <catch2/catch.hpp>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/session/step_map.h"
#include "gui/state/options.h"
#include "gui/state/shortcuts.h"
#include "gui/views/sampling_view.h"
#include "gui/views/step_map_view.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using namespace kvs::gui;

namespace {

// The tiny model's session sampled at T 2, top-k 5, top-p off: the prefill and three decode
// steps, with their logits and stages kept.
struct Sampled {
    CpuBackend be;
    std::unique_ptr<Model> model;
    std::unique_ptr<Session> session;
    Sampled(CacheMode mode = CacheMode::Cached) {
        model = open_model(test::write_tiny_model(test::temp_dir("gui-sampling-model")));
        SessionConfig c;
        c.mode = mode;
        c.sampler.temperature = 2;
        c.sampler.top_k = 5;
        c.sampler.top_p = 1;
        c.sampler.seed = 7;
        c.stop_at_end_token = false;
        session = std::make_unique<Session>(*model, be, c);
        session->set_prompt("the cat sat in the hat");
        for (int i = 0; i < 4; ++i) session->step();
    }
};

void check_view_is_stages(const SamplingView& v, const SamplingStages& s) {
    REQUIRE(v.columns.size() == 5);
    REQUIRE(v.ids.size() == s.entries.size());
    for (const SamplingColumn& c : v.columns) {
        REQUIRE(c.value.size() == s.entries.size());
        REQUIRE(c.text.size() == s.entries.size());
    }
    for (std::size_t i = 0; i < s.entries.size(); ++i) {
        const SamplingEntry& e = s.entries[i];
        INFO("entry " << i << " id " << e.id);
        CHECK(v.ids[i] == e.id);
        CHECK(v.columns[0].value[i] == e.logit);
        CHECK(v.columns[1].value[i] == e.scaled_logit);
        CHECK(v.columns[2].value[i] == e.p_tempered);
        CHECK(v.columns[3].value[i] == e.p_top_k);
        CHECK(v.columns[4].value[i] == e.p_final);
        CHECK(v.columns[0].text[i] == logit_text(e.logit));
        CHECK(v.columns[2].text[i] == probability_text(e.p_tempered));
        // Cut by top-k: written so, and out of the final column too.
        if (e.p_top_k == 0 && e.p_tempered > 0) {
            CHECK(v.columns[3].text[i] == "cut");
            CHECK(v.columns[4].cut[i]);
        }
        if (e.p_final > 0) CHECK(v.columns[4].text[i] == probability_text(e.p_final));
    }
    CHECK(v.columns[2].rest == s.rest_tempered);
    CHECK(v.columns[3].rest == s.rest_top_k);
    CHECK(v.columns[4].rest == s.rest_final);
    CHECK(v.coin == s.coin);
    // The strip: each kept token's interval of the cumulative mass, as the draw walks it.
    int kept = 0;
    for (const DrawSegment& d : v.strip) {
        const SamplingEntry& e = s.entries.at(d.row);
        CHECK(d.from == e.cdf_from);
        CHECK(d.width == e.p_final);
        ++kept;
    }
    CHECK(kept == std::count_if(s.entries.begin(), s.entries.end(),
                                [](const SamplingEntry& e) { return e.p_final > 0; }));
}

}  // namespace

TEST_CASE(
    "the Next token panel's stages are core's sampling stages, the drawn token's row "
    "holds the coin",
    "[gui][sampling]") {
    Sampled run;
    for (const StepRecord& r : run.session->trace().steps()) {
        INFO("step " << r.index);
        const SamplingView v = sampling_view(r.sampling);
        check_view_is_stages(v, r.sampling);
        REQUIRE(v.drawn_row >= 0);
        CHECK(v.ids[v.drawn_row] == r.token_out);
        const DrawSegment* seg = nullptr;
        for (const DrawSegment& d : v.strip)
            if (d.row == v.drawn_row) seg = &d;
        REQUIRE(seg != nullptr);
        CHECK(seg->from <= v.coin);
        CHECK(v.coin < seg->from + seg->width);
        CHECK(v.columns[3].head == "top-k 5");
        CHECK(v.columns[4].head == "top-p off");
        CHECK(v.rule.find("a coin") != std::string::npos);
        // Made again from the step's kept logits at the settings and coin of its draw, the
        // same stages (what the panel draws when it has room for other than 16 rows).
        SamplerConfig c;
        c.temperature = 2;
        c.top_k = 5;
        c.top_p = 1;
        const SamplingStages again = sampling_stages(r.logits, c, r.sampling.coin, 16);
        CHECK(again.drawn == r.sampling.drawn);
        check_view_is_stages(sampling_view(again), r.sampling);
    }
}

TEST_CASE("temperature, top-k and top-p changed in the window reshape the preview",
          "[gui][sampling]") {
    Sampled run;
    const StepRecord& r = run.session->trace().back();
    SamplerConfig c;
    c.temperature = 2;
    c.top_k = 5;
    c.top_p = 1;
    const SamplingView at2 = sampling_view(sampling_stages(r.logits, c, -1, 16));
    c.temperature = 0.5f;
    const SamplingView cold = sampling_view(sampling_stages(r.logits, c, -1, 16));
    // A preview has no draw; the same tokens, the most likely sharper at the lower temperature.
    CHECK(cold.drawn_row == -1);
    CHECK(cold.coin < 0);
    CHECK(cold.rule.find("no draw") != std::string::npos);
    REQUIRE(cold.ids == at2.ids);
    CHECK(cold.columns[2].value[0] > at2.columns[2].value[0]);
    CHECK(cold.columns[1].head == "÷ 0.5");
    c.top_k = 3;
    const SamplingView k3 = sampling_view(sampling_stages(r.logits, c, -1, 16));
    CHECK(k3.columns[3].head == "top-k 3");
    for (std::size_t i = 0; i < k3.ids.size(); ++i) CHECK((k3.columns[3].value[i] > 0) == (i < 3));
    c.top_p = 0.5f;
    const SamplingView p5 = sampling_view(sampling_stages(r.logits, c, -1, 16));
    CHECK(p5.columns[4].head == "top-p 0.5");
    int kept = 0;
    for (float p : p5.columns[4].value) kept += p > 0;
    CHECK(kept >= 1);
    CHECK(kept <= 3);
    c.temperature = 0;
    CHECK(sampling_view(sampling_stages(r.logits, c, -1, 16)).greedy);
}

TEST_CASE("the map of a step draws core's step_map, cached and uncached, a column per layer",
          "[gui][map]") {
    for (const CacheMode mode : {CacheMode::Cached, CacheMode::Uncached}) {
        Sampled run(mode);
        const int n_layers = run.model->config().n_layers;
        for (const StepRecord& r : run.session->trace().steps()) {
            INFO("step " << r.index << (mode == CacheMode::Cached ? " cached" : " uncached"));
            const StepMap m = step_map(r, n_layers);
            const StepMapView v = step_map_view(m, "x");
            REQUIRE(static_cast<int>(v.heads.size()) == n_layers);
            CHECK(v.cached.ran == (mode == CacheMode::Cached));
            CHECK(v.uncached.ran == (mode == CacheMode::Uncached));
            REQUIRE(v.cached.lines.size() == 4);
            REQUIRE(v.uncached.lines.size() >= 6);
            for (int l = 0; l < n_layers; ++l) {
                const LayerMap& lm = m.layers[l];
                CHECK(v.cached.lines[0].cells[l] == run_text(lm.cached.queries));
                CHECK(v.cached.lines[1].cells[l] == std::to_string(lm.cached.queries_needed));
                CHECK(v.cached.lines[2].cells[l] == run_text(lm.cached.kv_read));
                CHECK(v.cached.lines[3].cells[l] == run_text(lm.cached.kv_written));
                CHECK(v.uncached.lines[0].cells[l] == run_text(lm.uncached.queries));
                CHECK(v.uncached.lines[1].cells[l] == std::to_string(lm.uncached.queries_needed));
                CHECK(v.uncached.lines[4].cells[l] == run_text(lm.uncached.kv_recomputed));
                CHECK(v.uncached.lines[5].cells[l] == run_text(lm.uncached.kv_written));
            }
            // The why-not-Q chain: a decode without the cache needs every earlier query below the
            // last layer and only the newest at it; with the cache, one query at every layer.
            if (r.phase == Phase::Decode) {
                CHECK(v.cached.lines[1].cells.front() == "1");
                CHECK(v.cached.lines[1].cells.back() == "1");
                CHECK(v.uncached.lines[1].cells.front() == std::to_string(r.kv.len));
                CHECK(v.uncached.lines[1].cells.back() == "1");
                CHECK(v.uncached.lines[3].cells.back() == std::to_string(r.kv.len - 1));
            }
        }
    }
    CHECK(run_text({0, 6}) == "1-6");
    CHECK(run_text({6, 1}) == "7");
    CHECK(run_text({0, 0}) == "none");
}

TEST_CASE("a point in the map's column is that column's layer", "[gui][map]") {
    const MapColumns c = map_columns(4, 800, 200, 100);
    CHECK(c.col_w == 150);
    for (int l = 0; l < 4; ++l) {
        CHECK(c.layer_at(c.x_of(l) + 1) == l);
        CHECK(c.layer_at(c.x_of(l) + c.col_w * 0.5f) == l);
        CHECK(c.layer_at(c.x_of(l) + c.col_w - 1) == l);
    }
    CHECK(c.layer_at(199) == -1);  // the labels
    CHECK(c.layer_at(801) == -1);
    // Narrower than its columns need: each keeps its least width (the panel scrolls).
    CHECK(map_columns(40, 800, 200, 100).col_w == 100);
}

TEST_CASE("keys move the sampler and open the map, --views moves the controls", "[gui][keys]") {
    const KeyBinding* e = binding_for(GLFW_KEY_E, GLFW_MOD_SHIFT, false);
    REQUIRE(e != nullptr);
    CHECK(e->action == KeyAction::Temperature);
    CHECK(binding_for(GLFW_KEY_K, 0, false)->action == KeyAction::TopK);
    CHECK(binding_for(GLFW_KEY_U, 0, false)->action == KeyAction::TopP);
    CHECK(binding_for(GLFW_KEY_E, GLFW_MOD_CONTROL, false)->action == KeyAction::Export);
    const KeyBinding* y = binding_for(GLFW_KEY_Y, 0, false);
    REQUIRE(y != nullptr);
    CHECK(y->action == KeyAction::Maximise);
    CHECK(std::string(y->panel) == "map");
    const auto s = read_view("temperature=0.5,top-k=3,top-p=0.8,maximise=map");
    REQUIRE(s.size() == 4);
    CHECK(s[0].key == ViewSetting::Key::temperature);
    CHECK(s[0].number == 0.5f);
    CHECK(s[1].number == 3);
    CHECK(s[2].key == ViewSetting::Key::top_p);
    CHECK(s[3].panel == "map");
    CHECK_THROWS(read_view("temperature=3"));
    CHECK_THROWS(read_view("top-k=-1"));
    CHECK_THROWS(read_view("top-p=x"));
}
