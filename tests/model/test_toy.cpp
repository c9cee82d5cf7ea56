// The tutorials' toy example (core/model/toy_model.h) through Session and Trace: the tutorial's
// numbers, "none", the projection's ranking, one cached decode step against the cache, the trace
// JSON.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/loaders/model_loader.h"
#include "core/model/toy_model.h"
#include "core/session/session.h"
#include "core/session/trace_json.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

const ToyModel& toy() {
    static ToyModel m;
    return m;
}

// head_outputs: [n_layers 1, n_heads 4, rows]
float out(const StepRecord& r, int head, int row) {
    return r.head_outputs[std::size_t(head) * r.attention.rows + row];
}

int id(const char* word) {
    return toy().toy_tokenizer().id(word);
}

constexpr int kEven = 0, kLast = 1, kFirst = 2, kAll = 3;

}  // namespace

TEST_CASE("toy prefill reproduces the tutorial's table", "[toy]") {
    CpuBackend be;
    Session s(toy(), be);
    s.set_prompt("Today weather is so");
    const StepRecord& r = s.step();
    REQUIRE(r.attention.rows == 4);
    REQUIRE(r.head_outputs.size() == 16);
    // The tutorial's per-token results, rows Today, weather, is, so.
    const double even[] = {NAN, 20, 20, 12.5}, last[] = {10, 20, 1, 5}, first[] = {10, 10, 10, 10},
                 all[] = {10, 15, 31.0 / 3.0, 9};
    for (int t = 0; t < 4; ++t) {
        INFO("row " << t);
        if (t > 0) CHECK(out(r, kEven, t) == Approx(even[t]).margin(1e-6));
        CHECK(out(r, kLast, t) == Approx(last[t]).margin(1e-6));
        CHECK(out(r, kFirst, t) == Approx(first[t]).margin(1e-6));
        CHECK(out(r, kAll, t) == Approx(all[t]).margin(1e-6));
    }
    CHECK(std::fabs(out(r, kAll, 2) - 31.0 / 3.0) < 1e-6);
    // "even" at Today: no key at an even position, so "none": flagged, weights all 0.
    CHECK(std::isnan(out(r, kEven, 0)));
    CHECK(r.attention.is_empty_row(0, kEven, 0));
    CHECK(r.attention.row(0, kEven, 0)[0] == 0.0f);
    for (int h = 0; h < 4; ++h)
        for (int t = 0; t < 4; ++t) {
            if (h == kEven && t == 0) continue;
            CHECK_FALSE(r.attention.is_empty_row(0, h, t));
            double sum = 0;
            for (float p : r.attention.row(0, h, t)) sum += p;
            CHECK(sum == Approx(1.0).margin(1e-6));
        }
    // The context vector of "so".
    const float context[] = {12.5f, 5.0f, 10.0f, 9.0f};
    for (int h = 0; h < 4; ++h) CHECK(out(r, h, 3) == Approx(context[h]).margin(1e-6));
}

TEST_CASE("toy scores follow each head's rule under the causal mask", "[toy]") {
    CpuBackend be;
    Session s(toy(), be);
    s.set_prompt("Today weather is so");
    const AttentionRows& a = s.step().attention;
    REQUIRE_FALSE(a.scores.empty());
    const float inf = std::numeric_limits<float>::infinity();
    for (int t = 0; t < 4; ++t) {
        const auto even = a.score_row(0, kEven, t), last = a.score_row(0, kLast, t);
        const auto first = a.score_row(0, kFirst, t), all = a.score_row(0, kAll, t);
        REQUIRE(even.size() == static_cast<std::size_t>(t + 1));  // later keys: masked
        for (int j = 0; j <= t; ++j) {
            const int pos = j + 1;
            CHECK(even[j] == (pos % 2 == 0 ? 0.0f : -inf));
            CHECK(last[j] == (j == t ? 0.0f : -inf));
            CHECK(first[j] == (j == 0 ? 0.0f : -inf));
            CHECK(all[j] == 0.0f);
        }
    }
    // "even" at "so" weighs weather and so equally.
    const auto w = a.row(0, kEven, 3);
    CHECK(w[1] == Approx(0.5));
    CHECK(w[3] == Approx(0.5));
    CHECK(w[0] == 0.0f);
    CHECK(w[2] == 0.0f);
}

TEST_CASE("toy logits rank nice and warm above delicious, greedy picks nice", "[toy]") {
    CpuBackend be;
    Session s(toy(), be);
    s.set_prompt("Today weather is so");
    const StepRecord& r = s.step();
    REQUIRE(r.logits.size() == static_cast<std::size_t>(toy().config().vocab_size));
    const float nice = r.logits[id("nice")], warm = r.logits[id("warm")];
    const float delicious = r.logits[id("delicious")];
    CHECK(nice > delicious + 5);
    CHECK(warm > delicious + 5);
    CHECK(r.token_out == id("nice"));
    CHECK(r.top[0].id == id("nice"));
    CHECK(r.top[1].id == id("warm"));
    // The logits are the projection of the context vector, nothing else.
    const auto vocab = toy_vocabulary();
    const float context[] = {12.5f, 5.0f, 10.0f, 9.0f};
    for (std::size_t i = 0; i < vocab.size(); ++i) {
        float l = 0;
        for (int h = 0; h < 4; ++h) l += vocab[i].projection[h] * context[h];
        CHECK(r.logits[i] == Approx(l).margin(1e-5));
    }
}

TEST_CASE("toy cached decode computes one new row against the cache, as recomputation does",
          "[toy]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 2;
    Session cached(toy(), be, cfg);
    cfg.mode = CacheMode::Uncached;
    Session uncached(toy(), be, cfg);
    cached.set_prompt("Today weather is so");
    uncached.set_prompt("Today weather is so");
    const int P = 4;
    const StepRecord pre = cached.step();
    uncached.step();
    const StepRecord& d = cached.step();
    const StepRecord& u = uncached.step();

    CHECK(d.phase == Phase::Decode);
    CHECK(d.new_tokens == std::vector<int>{id("nice")});
    CHECK(d.tokens_processed == 1);
    CHECK(d.pos0 == P);  // the cached rows it read
    CHECK(d.attention.rows == 1);
    CHECK(d.attention.q_pos0 == P);
    CHECK(d.attention.row(0, 0, 0).size() == static_cast<std::size_t>(P + 1));
    CHECK(pre.kv.len == P);
    CHECK(d.kv.len == pre.kv.len + 1);
    CHECK(d.head_outputs.size() == 4);
    // The one K/V row appended: K = position 5, V = the value of "nice".
    REQUIRE(d.kv_rows_kept == 1);
    REQUIRE(d.kv_rows.size() == 2);
    CHECK(d.kv_rows[0] == 5.0f);
    CHECK(d.kv_rows[1] == toy_vocabulary()[id("nice")].value);
    CHECK(d.counts.flops < u.counts.flops);

    // The same new row as recomputing everything without the cache.
    CHECK(u.tokens_processed == P + 1);
    CHECK(u.attention.rows == 1);
    CHECK(u.kv.len == d.kv.len);
    CHECK(u.head_outputs == d.head_outputs);
    CHECK(u.logits == d.logits);
    CHECK(u.attention.p == d.attention.p);
    CHECK(u.attention.scores == d.attention.scores);
    CHECK(u.kv_rows == d.kv_rows);
    CHECK(u.token_out == d.token_out);
    // "nice" attends: even -> weather, so; last -> nice; first -> Today; all -> the mean of five.
    CHECK(out(d, kEven, 0) == Approx(12.5));
    CHECK(out(d, kLast, 0) == Approx(toy_vocabulary()[id("nice")].value));
    CHECK(out(d, kFirst, 0) == Approx(10));
    CHECK(out(d, kAll, 0) == Approx((36 + toy_vocabulary()[id("nice")].value) / 5));
}

TEST_CASE("toy decode reads the cache: a reset runner has nothing to attend to", "[toy]") {
    CpuBackend be;
    auto runner = toy().make_runner(be);
    ForwardResult fr;
    const int prompt[] = {id("Today"), id("weather"), id("is"), id("so")};
    runner->forward(prompt, Capture{}, fr);
    const int nice = id("nice");
    runner->forward(std::span<const int>(&nice, 1), Capture{}, fr);
    const std::vector<float> with_cache = fr.head_outputs;
    // Same token at position 1 of an empty cache: only itself to attend to.
    runner->reset();
    CHECK(runner->kv().len == 0);
    runner->forward(std::span<const int>(&nice, 1), Capture{}, fr);
    CHECK(fr.attention.q_pos0 == 0);
    CHECK(std::isnan(fr.head_outputs[kEven]));
    CHECK(fr.head_outputs[kAll] == toy_vocabulary()[nice].value);
    CHECK(with_cache[kAll] != fr.head_outputs[kAll]);
}

TEST_CASE("toy generation stops at '.', prefill token by token matches batched", "[toy]") {
    CpuBackend be;
    Session s(toy(), be);
    s.set_prompt("Today weather is so");
    while (!s.finished()) s.step();
    CHECK(s.finish_reason() == FinishReason::EndToken);
    CHECK(s.text() == "Today weather is so nice and warm");
    CHECK(s.trace().back().token_out == id("."));

    SessionConfig cfg;
    cfg.prefill_token_by_token = true;
    Session t(toy(), be, cfg);
    t.set_prompt("Today weather is so");
    Session b(toy(), be);
    b.set_prompt("Today weather is so");
    const StepRecord& x = t.step();
    const StepRecord& y = b.step();
    CHECK(x.forward_calls == 4);
    CHECK(x.head_outputs.size() == y.head_outputs.size());
    for (std::size_t i = 0; i < x.head_outputs.size(); ++i)
        CHECK((x.head_outputs[i] == y.head_outputs[i] ||
               (std::isnan(x.head_outputs[i]) && std::isnan(y.head_outputs[i]))));
    CHECK(x.attention.p == y.attention.p);
    CHECK(x.attention.scores == y.attention.scores);
    CHECK(x.attention.empty_row == y.attention.empty_row);
    CHECK(x.kv_rows == y.kv_rows);
    CHECK(x.logits == y.logits);
}

TEST_CASE("toy tokenizer: Today's, case, '.', unknown words", "[toy]") {
    const Tokenizer& tok = toy().tokenizer();
    const auto plain = tok.encode("Today weather is so");
    CHECK(plain == std::vector<int>{id("Today"), id("weather"), id("is"), id("so")});
    CHECK(tok.encode("Today's weather is so") == plain);
    CHECK(tok.encode("Today\xE2\x80\x99s weather is so") == plain);
    CHECK(tok.encode("  today WEATHER is so ") == plain);
    CHECK(tok.encode("nice and warm.") ==
          std::vector<int>{id("nice"), id("and"), id("warm"), id(".")});
    CHECK(tok.decode(-1, id("Today")) == "Today");
    CHECK(tok.decode(id("warm"), id(".")) == ".");
    CHECK(tok.bos() < 0);
    try {
        tok.encode("Today weather is hot");
        FAIL("an unknown word was accepted");
    } catch (const Error& e) {
        const std::string msg = e.what();
        CHECK(msg.find("'hot'") != std::string::npos);
        CHECK(msg.find("Today, weather, is, so, nice") != std::string::npos);
        CHECK(msg.find('\n') == std::string::npos);
    }
    CpuBackend be;
    Session s(toy(), be);
    CHECK_THROWS_AS(s.set_prompt(""), Error);
}

TEST_CASE("open_model('toy') is the toy, with honest shapes", "[toy]") {
    auto m = open_model("toy");
    REQUIRE(m->is_toy());
    CHECK(m->name() == "toy");
    const ModelConfig& c = m->config();
    CHECK(c.n_layers == 1);
    CHECK(c.n_heads == 4);
    CHECK(c.head_dim() == 1);
    CHECK(c.kv_dim() == 1);
    CHECK(c.vocab_size == static_cast<int>(toy_vocabulary().size()));
    CpuBackend be;
    auto r = m->make_runner(be);
    CHECK(r->backend() == nullptr);
    CHECK(r->backend_name() == "toy (host)");
    // Context full is a kvs::Error, not a crash.
    std::vector<int> ids(c.seq_len + 1, 0);
    ForwardResult fr;
    CHECK_THROWS_AS(r->forward(ids, Capture{}, fr), Error);
}

TEST_CASE("toy trace renders through the trace JSON, none as NaN", "[toy]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 2;
    Session s(toy(), be, cfg);
    s.set_prompt("Today's weather is so");
    while (!s.finished()) s.step();
    std::ostringstream os;
    write_trace_json(os, s);
    const auto j = nlohmann::json::parse(os.str());
    CHECK(j.at("model").at("toy") == true);
    CHECK(j.at("model").at("name") == "toy");
    CHECK(j.at("model").at("n_heads") == 4);
    CHECK(j.at("token_pieces") == nlohmann::json({"Today", "weather", "is", "so", "nice", "and"}));
    CHECK(j.at("text") == "Today weather is so nice and");
    REQUIRE(j.at("steps").size() == 2);
    const auto& pre = j.at("steps").at(0);
    CHECK(pre.at("phase") == "prefill");
    CHECK(pre.at("token_out_piece") == "nice");
    // head_outputs [1, 4, 4]: even@Today is "NaN" (none), the rest are numbers.
    const auto& ho = pre.at("head_outputs");
    REQUIRE(ho.size() == 16);
    CHECK(ho[0] == "NaN");
    CHECK(ho[3].get<double>() == Approx(12.5));
    CHECK(ho[12 + 2].get<double>() == Approx(31.0 / 3.0).margin(1e-6));
    for (std::size_t i = 1; i < ho.size(); ++i) CHECK(ho[i].is_number());
    // The empty row is null in the weights; -inf scores are "-Infinity".
    const auto& att = pre.at("attention");
    CHECK(att.at("weights").at(0).at(kEven).at(0).is_null());
    CHECK(att.at("weights").at(0).at(kEven).at(3) == nlohmann::json({0.0, 0.5, 0.0, 0.5}));
    CHECK(att.at("scores").at(0).at(kFirst).at(3) ==
          nlohmann::json({0.0, "-Infinity", "-Infinity", "-Infinity"}));
    CHECK(pre.at("kv_rows").at("rows") == 4);
    CHECK(pre.at("kv_rows").at("values") == nlohmann::json({1, 2, 3, 4, 10, 20, 1, 5}));
    const auto& dec = j.at("steps").at(1);
    CHECK(dec.at("tokens_processed") == 1);
    CHECK(dec.at("kv").at("len") == 5);
    CHECK(dec.at("attention").at("rows") == 1);
    CHECK(dec.at("attention").at("weights").at(0).at(kAll).at(0).size() == 5);
    CHECK(dec.at("time").at("backend") == "toy (host)");
}

TEST_CASE("kvscope-cli toy prints the table, a bad word is exit 2", "[toy][cli]") {
    const auto r = test::run_cli({"toy", "--decode", "2"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* line : {"1 Today           1     10 |      none        10        10        10",
                             "3 is              3      1 |        20         1        10     10.33",
                             "[12.5, 5, 10, 9]", "chosen (greedy): \"nice\"",
                             "decode step 1 (cached): \"nice\" at position 5; 1 row through the "
                             "model, read 4 cached K/V rows, appended 1 (cache 5 rows)",
                             "decode step 2 (cached)", "masked"})
        CHECK(r.out.find(line) != std::string::npos);
    CHECK(r.out.find("nan") == std::string::npos);

    const auto u = test::run_cli({"toy", "--no-cache", "--prompt", "Today's weather is so"});
    CHECK(u.exit_code == 0);
    CHECK(u.out.find("cache emptied, all 5 rows recomputed") != std::string::npos);

    const auto bad = test::run_cli({"toy", "--prompt", "Today weather is hot"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("'hot' is not in the toy vocabulary") != std::string::npos);
    CHECK(bad.err.find('\n') == bad.err.size() - 1);
    CHECK(test::run_cli({"toy", "--decode", "99"}).exit_code == 2);

    // info counts the toy's own weights: value table [10] + projection [10, 4].
    const auto info = test::run_cli({"info", "--model", "toy"});
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("parameters 50 (200 B float32)") != std::string::npos);
}
