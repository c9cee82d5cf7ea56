// The next-token choice as stages (core/session/sampling_stages.h): the distribution a step
// records is the one its draw indexed, at every temperature, top-k and top-p; a session records
// it, and a trace keeps it.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/session/sampling_stages.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/session/trace_reader.h"
#include "core/util/error.h"
#include "core/util/splitmix64.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

std::vector<float> some_logits(int n, std::uint64_t seed) {
    std::vector<float> l(n);
    std::uint64_t s = seed;
    for (float& x : l) x = float(splitmix64_next(s) % 4000) / 1000.0f - 2.0f;
    return l;
}

// softmax(logits / t) in double, independently of the sampler.
std::vector<double> tempered(const std::vector<float>& l, double t) {
    double mx = -1e300;
    for (float x : l) mx = std::max(mx, double(x) / t);
    std::vector<double> p(l.size());
    double z = 0;
    for (std::size_t i = 0; i < l.size(); ++i) z += p[i] = std::exp(double(l[i]) / t - mx);
    for (double& x : p) x /= z;
    return p;
}

const SamplingEntry* entry(const SamplingStages& s, int id) {
    for (const SamplingEntry& e : s.entries)
        if (e.id == id) return &e;
    return nullptr;
}

}  // namespace

TEST_CASE(
    "the recorded stages are the distribution the draw indexed: every draw lands in its "
    "token's interval, and draws follow p_final",
    "[sampler][sampling stages]") {
    const std::vector<float> l = some_logits(40, 5);
    const SamplerConfig configs[] = {
        {2.0f, 5, 0.0f, 1},   // top-k only: drawn by token id
        {0.7f, 0, 0.9f, 2},   // top-p only: the nucleus, best first
        {1.0f, 0, 0.0f, 3},   // plain multinomial
        {1.5f, 8, 0.6f, 4},   // both
        {2.0f, 40, 1.0f, 5},  // k = vocab, p = 1: both off
    };
    for (const SamplerConfig& c : configs) {
        INFO("T " << c.temperature << " top-k " << c.top_k << " top-p " << c.top_p);
        Sampler sampler(c);
        // Every token with mass at the end is an entry here (40 entries: the whole vocabulary).
        const SamplingStages preview = sampling_stages(l, c, -1, 40);
        REQUIRE(preview.entries.size() == 40);
        CHECK(preview.drawn == -1);
        double total = 0;
        int with_mass = 0;
        for (const SamplingEntry& e : preview.entries) {
            total += e.p_final;
            with_mass += e.p_final > 0;
        }
        CHECK(total == Approx(1.0).epsilon(1e-5));
        CHECK(with_mass == preview.kept_top_p);
        std::map<int, int> count;
        const int n = 20000;
        for (int i = 0; i < n; ++i) {
            const Draw d = sampler.sample(l);
            const SamplingStages s = sampling_stages(l, c, d.coin, 4);
            REQUIRE(s.drawn == d.token);
            const SamplingEntry* e = entry(s, d.token);
            REQUIRE(e != nullptr);  // the drawn token is listed even outside the 4 most likely
            // The coin as it walks the final distribution (the nucleus scales it by its mass,
            // which renormalising undoes): inside this token's interval.
            CHECK(e->p_final > 0);
            CHECK(d.coin >= e->cdf_from - 1e-6f);
            CHECK(d.coin < e->cdf_from + e->p_final + 1e-6f);
            ++count[d.token];
        }
        for (const SamplingEntry& e : preview.entries) {
            const double p = e.p_final, sd = std::sqrt(p * (1 - p) / n);
            INFO("token " << e.id << " p_final " << p << " drawn " << count[e.id]);
            CHECK(std::fabs(double(count[e.id]) / n - p) <= 5 * sd + 1e-9);
        }
    }
}

TEST_CASE(
    "temperature 2 and top-k 5: the stages are softmax(l / 2), its 5 largest renormalised, "
    "and nothing else is drawn",
    "[sampler][sampling stages]") {
    const std::vector<float> l = some_logits(50, 9);
    const SamplerConfig c{2.0f, 5, 0.0f, 7};
    const SamplingStages s = sampling_stages(l, c, 0.5f, 10);
    CHECK(s.temperature == 2.0f);
    CHECK(s.kept_top_k == 5);
    CHECK(s.kept_top_p == 5);
    CHECK(s.draw_by_id);
    REQUIRE(s.entries.size() == 10);
    const std::vector<double> t1 = tempered(l, 1), t2 = tempered(l, 2);
    std::vector<int> order(l.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
    double top5 = 0;
    for (int k = 0; k < 5; ++k) top5 += t2[order[k]];
    double rest_final = 1;
    for (int k = 0; k < 10; ++k) {
        const SamplingEntry& e = s.entries[k];
        INFO("entry " << k);
        CHECK(e.id == order[k]);  // best first
        CHECK(e.logit == l[e.id]);
        CHECK(e.scaled_logit == Approx(l[e.id] / 2.0));
        CHECK(e.p == Approx(t1[e.id]).epsilon(1e-5));
        CHECK(e.p_tempered == Approx(t2[e.id]).epsilon(1e-5));
        const double kept = k < 5 ? t2[e.id] / top5 : 0.0;
        CHECK(e.p_top_k == Approx(kept).epsilon(1e-5));
        CHECK(e.p_final == Approx(kept).epsilon(1e-5));
        rest_final -= e.p_final;
    }
    CHECK(s.rest_final == Approx(std::max(0.0, rest_final)).margin(1e-6));
    Sampler sampler(c);
    for (int i = 0; i < 2000; ++i) {
        const int t = sampler.sample(l).token;
        CHECK(std::find(order.begin(), order.begin() + 5, t) != order.begin() + 5);
    }
}

TEST_CASE("greedy: the largest logit drawn with certainty, no coin", "[sampler][sampling stages]") {
    const std::vector<float> l{0.5f, 2.0f, 2.0f, -1.0f};
    const SamplingStages s = sampling_stages(l, {0.0f, 3, 0.5f, 1}, -1, 2);
    CHECK(s.greedy);
    CHECK(s.drawn == 1);
    CHECK(s.coin < 0);
    REQUIRE(s.entries.size() == 2);
    CHECK(s.entries[0].id == 1);
    CHECK(s.entries[0].p_final == 1.0f);
    CHECK(s.entries[1].p_final == 0.0f);
    CHECK(s.entries[0].p_tempered == s.entries[0].p);  // no temperature applied
}

TEST_CASE(
    "a session records the stages its draw used, a trace keeps them and refuses a drawn "
    "token that is not the step's",
    "[sampler][sampling stages][trace]") {
    const auto model = test::open_tiny_model("sampling");
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 6;
    cfg.timing.runs = 1;
    cfg.sampler = {2.0f, 5, 0.0f, 11};
    Session s(*model, be, cfg);
    s.set_prompt("the cat");
    while (!s.finished()) s.step();
    for (const StepRecord& r : s.trace().steps()) {
        INFO("step " << r.index);
        const SamplingStages& st = r.sampling;
        CHECK(st.vocab == model->config().vocab_size);
        CHECK(st.temperature == 2.0f);
        CHECK(st.kept_top_k == 5);
        CHECK(st.drawn == r.token_out);
        CHECK(st.coin == r.coin);
        CHECK_FALSE(st.forced);
        CHECK(st.entries.size() >= 16);
        // Recomputed from the step's logits, the same stages.
        const SamplingStages again = sampling_stages(r.logits, cfg.sampler, r.coin, 16);
        CHECK(again.drawn == st.drawn);
        for (std::size_t k = 0; k < again.entries.size(); ++k)
            CHECK(again.entries[k].p_final == st.entries[k].p_final);
    }
    std::ostringstream os;
    write_trace_json(os, s, recorded_here("test", "cpu", "CPU", 1));
    const RecordedRun run = read_trace_json(os.str(), "t.json");
    const auto& a = s.trace().steps();
    const auto& b = run.sessions.at(0).trace.steps();
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
        const SamplingStages &x = a[k].sampling, &y = b[k].sampling;
        CHECK(x.drawn == y.drawn);
        CHECK(x.coin == y.coin);
        CHECK(x.kept_top_k == y.kept_top_k);
        CHECK(x.kept_top_p == y.kept_top_p);
        CHECK(x.draw_by_id == y.draw_by_id);
        REQUIRE(x.entries.size() == y.entries.size());
        for (std::size_t e = 0; e < x.entries.size(); ++e) {
            CHECK(x.entries[e].id == y.entries[e].id);
            CHECK(x.entries[e].p_tempered == y.entries[e].p_tempered);
            CHECK(x.entries[e].p_final == y.entries[e].p_final);
            CHECK(x.entries[e].cdf_from == y.entries[e].cdf_from);
        }
        CHECK(x.rest_final == y.rest_final);
    }
    auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& why) {
        nlohmann::json j = nlohmann::json::parse(os.str());
        edit(j);
        INFO(why);
        try {
            read_trace_json(j.dump(), "t.json");
            FAIL("read without complaint");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find(why) != std::string::npos);
        }
    };
    const int other = (b[1].token_out + 1) % model->config().vocab_size;
    refused([&](nlohmann::json& j) { j["steps"][1]["sampling"]["drawn"] = other; },
            "steps[1].sampling.drawn: not the step's token_out");
    refused([](nlohmann::json& j) { j["steps"][1]["sampling"]["entries"][0]["p_final"] = 2; },
            "steps[1].sampling.entries[0].p_final");
    refused(
        [](nlohmann::json& j) {
            j["steps"][1]["sampling"]["entries"][1]["id"] =
                j["steps"][1]["sampling"]["entries"][0]["id"];
        },
        "listed twice");
    refused([](nlohmann::json& j) { j["steps"][1]["sampling"]["draw_order"] = "luck"; },
            "draw_order");
}
