// The trace's memory budget, its JSON form, and the cached-versus-uncached logit difference.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/session/logit_difference.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/util/json_writer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

TEST_CASE("payloads beyond the budget are dropped oldest first, scalars stay", "[trace]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 40;
    cfg.trace_budget = 64 * 1024;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the cat");
    while (!s.finished()) s.step();
    const Trace& t = s.trace();
    CHECK(t.payload_bytes() <= t.budget());
    CHECK(t.evicted_steps() > 0);
    CHECK(t.steps().size() == static_cast<std::size_t>(s.generated()));
    CHECK(t.steps()[1].payload_evicted);
    CHECK_FALSE(t.back().payload_evicted);
    CHECK(t.back().attention.rows == 1);
    for (const StepRecord& r : t.steps()) {
        CHECK(r.wall_seconds > 0);
        CHECK(r.kv.len > 0);
        CHECK(!r.top.empty());
    }
    std::size_t sum = 0;
    for (const StepRecord& r : t.steps()) sum += r.payload_bytes();
    CHECK(sum == t.payload_bytes());
}

TEST_CASE("the trace JSON holds every step, attention rows and KV shape", "[trace]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 3;
    Session s(test::shared_tiny_model(), be, cfg);
    s.set_prompt("the \xF0\x9F\x98\x80 cat");
    while (!s.finished()) s.step();
    std::ostringstream os;
    write_trace_json(os, s);
    const auto j = nlohmann::json::parse(os.str());
    CHECK(j.at("kvscope_trace") == kTraceJsonVersion);
    CHECK(j.at("model").at("n_kv_heads") == 2);
    CHECK(j.at("tokens").size() == s.tokens().size());
    REQUIRE(j.at("steps").size() == 3);
    const auto& pre = j.at("steps").at(0);
    CHECK(pre.at("phase") == "prefill");
    CHECK(pre.at("attention").at("weights").size() == 2);        // layers
    CHECK(pre.at("attention").at("weights").at(0).size() == 4);  // heads
    CHECK(pre.at("attention").at("weights").at(0).at(0).size() ==
          static_cast<std::size_t>(s.prompt_len()));
    CHECK(pre.at("attention").at("weights").at(0).at(0).at(2).size() == 3);  // row 2 sees keys 0..2
    CHECK(pre.at("kv").at("bytes") == s.trace().steps()[0].kv.bytes());
    const auto& d = j.at("steps").at(2);
    CHECK(d.at("phase") == "decode");
    CHECK(d.at("attention").at("rows") == 1);
    CHECK(d.at("logits").size() == 300);
    CHECK(d.at("time").at("wall_s").get<double>() > 0);
    CHECK(d.at("counts").at("flops").get<double>() > 0);
}

TEST_CASE("max |logit difference| of two steps, NaN when one kept no logits", "[trace]") {
    StepRecord a, b;
    a.logits = {1.0f, -2.0f, 3.0f};
    b.logits = {1.5f, -2.0f, 0.5f};
    CHECK(max_logit_difference(a, b) == 2.5);
    CHECK(max_logit_difference(a, a) == 0.0);
    b.logits.pop_back();  // another length
    CHECK(std::isnan(max_logit_difference(a, b)));
    a.drop_payload();  // evicted by the trace's budget
    CHECK(std::isnan(max_logit_difference(a, a)));
}

TEST_CASE("JSON numbers are written as printf's %.9g, byte for byte", "[trace][json]") {
    // The trace's floats (and the doubles of its times) must read back as the same text they
    // always had: files written before and after compare equal.
    std::vector<double> values = {
        0.0,     -0.0, 1.0, 0.1, 1e-7, 1e21, 123456789.0, 1e-300, 3.4028234663852886e38,
        -2.5e-5, 0.5,  42};
    std::uint32_t x = 12345;
    for (int i = 0; i < 20000; ++i) {
        x = x * 1664525u + 1013904223u;
        float f;
        std::memcpy(&f, &x, sizeof f);
        if (std::isfinite(f)) values.push_back(f);
    }
    std::ostringstream os;
    JsonWriter j(os);
    j.begin_array();
    std::string expected = "[";
    for (double v : values) {
        j.value(v);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        if (expected.size() > 1) expected += ',';
        expected += buf;
    }
    j.value(std::int64_t{-9223372036854775807 - 1}).value(std::int64_t{0}).end_array();
    expected += ",-9223372036854775808,0]";
    CHECK(os.str() == expected);
}
