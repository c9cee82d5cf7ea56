// A run written as trace JSON and read back (core/trace_reader.h): the same steps, field for
// field; compare mode's twin; older and newer versions; hostile traces refused in one line; the
// CSV and Chrome / Perfetto exports of the same run.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/loaders/model_loader.h"
#include "core/model/toy_model.h"
#include "core/session/attention_matrix.h"
#include "core/session/session.h"
#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/session/trace_json.h"
#include "core/session/trace_reader.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "core/util/utf8.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using nlohmann::json;

namespace {

std::shared_ptr<const Model> tiny() {
    static std::shared_ptr<const Model> m = test::open_tiny_model("replay");
    return m;
}

RecordedOn here() {
    return recorded_here("test", "cpu", "CPU, 1 thread", 1);
}

// A cached session of `steps` steps on the tiny model, every payload kept.
std::string cached_trace(int steps) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = steps;
    cfg.timing.runs = 1;
    Session s(*tiny(), be, cfg);
    s.set_prompt("the cat sat");
    while (!s.finished()) s.step();
    std::ostringstream os;
    write_trace_json(os, s, here());
    return os.str();
}

// Compare mode: the cached session and its uncached twin, with their logit differences.
std::string compare_trace(int steps) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = steps;
    cfg.timing.runs = 1;
    Workbench bench(be, cfg);
    bench.set_view(CacheView::Compare);
    bench.open(tiny(), "the cat");
    while (!bench.finished()) bench.step();
    TraceJsonRun run;
    run.model = tiny().get();
    run.sampler = cfg.sampler;
    run.recorded = here();
    run.sessions = {trace_json_session(bench.session(0)), trace_json_session(bench.session(1))};
    run.logit_max_diff = bench.logit_differences();
    std::ostringstream os;
    write_trace_json(os, run);
    return os.str();
}

// The same number as JSON wrote it: floats exactly, doubles to the 9 digits written.
bool near(double a, double b) {
    return a == b || std::fabs(a - b) <= 1e-8 * std::max(std::fabs(a), std::fabs(b));
}
bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
}

void check_same_step(const StepRecord& a, const StepRecord& b) {
    INFO("step " << a.index);
    CHECK(a.index == b.index);
    CHECK(a.phase == b.phase);
    CHECK(a.mode == b.mode);
    CHECK(a.new_tokens == b.new_tokens);
    CHECK(a.pos0 == b.pos0);
    CHECK(a.tokens_processed == b.tokens_processed);
    CHECK(a.forward_calls == b.forward_calls);
    CHECK(a.token_out == b.token_out);
    CHECK(a.coin == b.coin);
    REQUIRE(a.top.size() == b.top.size());
    for (std::size_t i = 0; i < a.top.size(); ++i) {
        CHECK(a.top[i].id == b.top[i].id);
        CHECK(a.top[i].prob == b.top[i].prob);
        CHECK(a.top[i].logit == b.top[i].logit);
    }
    CHECK(same_floats(a.logits, b.logits));
    CHECK(a.attention.n_layers == b.attention.n_layers);
    CHECK(a.attention.n_heads == b.attention.n_heads);
    CHECK(a.attention.rows == b.attention.rows);
    CHECK(a.attention.q_pos0 == b.attention.q_pos0);
    CHECK(same_floats(a.attention.p, b.attention.p));
    CHECK(same_floats(a.attention.scores, b.attention.scores));
    CHECK(a.kv_rows_kept == b.kv_rows_kept);
    CHECK(same_floats(a.kv_rows, b.kv_rows));
    CHECK(same_floats(a.q_rows, b.q_rows));
    CHECK(same_floats(a.attn_out, b.attn_out));
    REQUIRE(a.ops.ops.size() == b.ops.ops.size());
    for (std::size_t i = 0; i < a.ops.ops.size(); ++i) {
        const OpRecord &x = a.ops.ops[i], &y = b.ops.ops[i];
        CHECK(x.kind == y.kind);
        CHECK(x.layer == y.layer);
        CHECK((x.in.rows == y.in.rows && x.in.features == y.in.features));
        CHECK((x.out.rows == y.out.rows && x.out.features == y.out.features));
        CHECK(near(x.flops, y.flops));
        CHECK(near(x.seconds, y.seconds));
        CHECK(x.timed_with == y.timed_with);
    }
    CHECK(a.payload_evicted == b.payload_evicted);
    CHECK(a.query_rows_computed == b.query_rows_computed);
    CHECK(a.kv_rows_written == b.kv_rows_written);
    CHECK(a.kv_rows_recomputed == b.kv_rows_recomputed);
    CHECK(near(a.kv_recomputed_max_delta, b.kv_recomputed_max_delta));
    CHECK(a.kv.len == b.kv.len);
    CHECK(a.kv.capacity == b.kv.capacity);
    CHECK(a.kv.bytes() == b.kv.bytes());
    CHECK(near(a.wall_seconds, b.wall_seconds));
    CHECK(near(a.forward_seconds, b.forward_seconds));
    CHECK(a.timing_runs == b.timing_runs);
    for (int i = 0; i < kOpCount; ++i) {
        CHECK(near(a.op_times.seconds[i], b.op_times.seconds[i]));
        CHECK(a.op_times.calls[i] == b.op_times.calls[i]);
    }
    CHECK(a.backend == b.backend);
    CHECK(a.device == b.device);
    CHECK(near(a.counts.flops, b.counts.flops));
    CHECK(near(a.counts.bytes, b.counts.bytes));
    // The bytes apart, as the model counted them from its weights as kept: a replay has no
    // weights to count them again.
    CHECK(near(a.counts.weight_bytes, b.counts.weight_bytes));
    CHECK(near(a.counts.kv_read_bytes, b.counts.kv_read_bytes));
    CHECK(near(a.counts.kv_write_bytes, b.counts.kv_write_bytes));
    CHECK(b.counts.weight_bytes > 0);
    CHECK(a.timed_in_turn == b.timed_in_turn);
}

// `text` with one edit, which must then be refused with a message holding `why`.
void expect_refused(const std::string& text, const std::string& why) {
    INFO("expected: " << why);
    try {
        read_trace_json(text, "t.json");
        FAIL("read without complaint");
    } catch (const Error& e) {
        const std::string m = e.what();
        INFO("message: " << m);
        CHECK(m.rfind("t.json: ", 0) == 0);
        CHECK(m.find('\n') == std::string::npos);
        CHECK(m.find(why) != std::string::npos);
    }
}

bool valid_utf8(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// A CSV line's fields, quotes undone.
std::vector<std::string> csv_cells(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            out.back() += '"';
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            out.emplace_back();
        } else {
            out.back() += c;
        }
    }
    return out;
}

std::string edited(const std::string& text, const std::function<void(json&)>& edit) {
    json j = json::parse(text);
    edit(j);
    return j.dump();
}

}  // namespace

TEST_CASE("a trace read back holds the steps it was written from, field for field",
          "[trace][replay]") {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 5;
    cfg.timing.runs = 1;
    Session s(*tiny(), be, cfg);
    s.set_prompt("the cat sat");
    while (!s.finished()) s.step();
    std::ostringstream os;
    write_trace_json(os, s, here());
    const RecordedRun run = read_trace_json(os.str(), "t.json");
    CHECK(run.version == kTraceJsonVersion);
    CHECK(run.recorded.program == "test");
    CHECK(run.recorded.device == "CPU, 1 thread");
    CHECK(!run.recorded.date.empty());
    REQUIRE(run.sessions.size() == 1);
    const RecordedSession& r = run.sessions[0];
    CHECK(r.tokens == s.tokens());
    CHECK(r.prompt_len == s.prompt_len());
    // JSON holds text, not bytes: a byte that is not UTF-8 is written as \u00XX and comes back
    // as that character (docs/trace-json.md).
    if (valid_utf8(s.text())) CHECK(r.text == s.text());
    CHECK(r.finish == s.finish_reason());
    REQUIRE(r.trace.steps().size() == s.trace().steps().size());
    for (std::size_t k = 0; k < r.trace.steps().size(); ++k)
        check_same_step(s.trace().steps()[k], r.trace.steps()[k]);
    // The model is the recorded one's shapes and pieces, without weights.
    const Model& m = *run.model;
    CHECK(m.name() == tiny()->name());
    CHECK(m.config().dim == tiny()->config().dim);
    CHECK(m.config().n_kv_heads == tiny()->config().n_kv_heads);
    CHECK(m.parameter_count() == tiny()->parameter_count());
    CHECK(m.tokenizer().bos() == tiny()->tokenizer().bos());
    for (int t : s.tokens()) CHECK(m.tokenizer().piece(t) == tiny()->tokenizer().piece(t));
    CHECK(m.count_forward(3, 2).flops == tiny()->count_forward(3, 2).flops);
    CHECK_THROWS_AS(m.make_runner(be), Error);
    // Written again, it is the same file.
    std::ostringstream again;
    write_trace_json(again, run.view());
    json a = json::parse(again.str()), b = json::parse(os.str());
    for (json* j : {&a, &b}) {
        j->erase("text");
        j->erase("trace_memory");  // this process's bytes (vector capacities), not the run's
    }
    CHECK(a == b);
}

TEST_CASE("compare mode's twin and logit differences come back, and the toy is the built-in one",
          "[trace][replay]") {
    const RecordedRun run = read_trace_json(compare_trace(4), "c.json");
    REQUIRE(run.compare());
    CHECK(run.sessions[0].mode == CacheMode::Cached);
    CHECK(run.sessions[1].mode == CacheMode::Uncached);
    CHECK(run.sessions[0].trace.steps().size() == run.sessions[1].trace.steps().size());
    CHECK(run.logit_max_diff.size() == run.sessions[0].trace.steps().size());
    CHECK(run.sessions[1].trace.back().tokens_processed > 1);  // recomputed every row

    ToyModel toy;
    CpuBackend be;
    SessionConfig cfg;
    cfg.top_k_record = toy.config().vocab_size;
    cfg.timing.runs = 1;
    cfg.max_new_tokens = 3;
    Session s(toy, be, cfg);
    s.set_prompt("Today weather is so");
    while (!s.finished()) s.step();
    std::ostringstream os;
    write_trace_json(os, s, here());
    const RecordedRun t = read_trace_json(os.str(), "toy.json");
    CHECK(t.model->is_toy());
    for (std::size_t k = 0; k < s.trace().steps().size(); ++k) {
        check_same_step(s.trace().steps()[k], t.sessions[0].trace.steps()[k]);
        CHECK(same_floats(s.trace().steps()[k].head_outputs,
                          t.sessions[0].trace.steps()[k].head_outputs));
        CHECK(s.trace().steps()[k].attention.empty_row ==
              t.sessions[0].trace.steps()[k].attention.empty_row);
    }
}

TEST_CASE("version 1 traces are read, a newer version is refused by name", "[trace][replay]") {
    const std::string v2 = cached_trace(3);
    // Version 1: no recorded block, no model design fields, no op call counts.
    const std::string v1 = edited(v2, [](json& j) {
        j["kvscope_trace"] = 1;
        j.erase("recorded");
        for (const char* k : {"architecture", "shared_classifier", "qkv_bias", "n_positions",
                              "format", "parameters", "bos"})
            j.at("model").erase(k);
        for (auto& s : j.at("steps")) s.at("time").erase("op_calls");
    });
    const RecordedRun old = read_trace_json(v1, "old.json");
    CHECK(old.version == 1);
    CHECK(old.recorded.date.empty());
    CHECK(old.recorded.device == old.sessions[0].trace.back().device);
    CHECK(old.sessions[0].trace.steps().size() == 3);
    CHECK(old.model->tokenizer().bos() == tiny()->tokenizer().bos());  // from its "<s>" piece
    // A trace written before the bytes were kept apart: the K/V bytes counted from the step's
    // shapes, the weights the rest of the recorded bytes.
    const RecordedRun whole = read_trace_json(v2, "new.json");
    const RecordedRun apart = read_trace_json(
        edited(v2,
               [](json& j) {
                   for (auto& s : j.at("steps"))
                       for (const char* k : {"weight_bytes", "kv_read_bytes", "kv_write_bytes"})
                           s.at("counts").erase(k);
               }),
        "older.json");
    for (std::size_t k = 0; k < 3; ++k) {
        const StepCounts &a = whole.sessions[0].trace.steps()[k].counts,
                         &b = apart.sessions[0].trace.steps()[k].counts;
        CHECK(a.weight_bytes == Approx(b.weight_bytes));
        CHECK(a.kv_read_bytes == b.kv_read_bytes);
        CHECK(a.kv_write_bytes == b.kv_write_bytes);
    }
    expect_refused(edited(v2, [](json& j) { j["steps"][1]["counts"]["weight_bytes"] = 1; }),
                   "steps[1].counts: weight_bytes + kv_read_bytes + kv_write_bytes is not bytes");
    expect_refused(edited(v2, [](json& j) { j["kvscope_trace"] = 3; }),
                   "a trace of version 3, newer than this kvscope reads (2 and older)");
    expect_refused(edited(v2, [](json& j) { j.erase("kvscope_trace"); }),
                   "not a kvscope trace (no kvscope_trace field)");
    expect_refused(edited(v2, [](json& j) { j["kvscope_trace"] = "two"; }), "not a trace version");
}

TEST_CASE("hostile traces: every id, count and shape is checked, one line, never a crash",
          "[trace][replay][hostile]") {
    const std::string t = cached_trace(3);
    const int vocab = tiny()->config().vocab_size;
    expect_refused("", "not a kvscope trace");
    expect_refused("[1, 2]", "not a kvscope trace");
    expect_refused(t.substr(0, t.size() / 2),
                   "not valid JSON at byte " + std::to_string(t.size() / 2) + " (line ");
    expect_refused("{\"kvscope_trace\": 1e999}",
                   "not valid JSON: a number beyond a double's range ('1e999')");
    expect_refused(std::string(100000, '[') + std::string(100000, ']'), "not a kvscope trace");
    expect_refused("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
                   "nested deeper than a kvscope trace");
    expect_refused(edited(t, [&](json& j) { j["steps"][1]["token_out"] = vocab; }),
                   "steps[1].token_out: " + std::to_string(vocab) + " is out of range");
    expect_refused(edited(t, [](json& j) { j["steps"][0]["new_tokens"][0] = -1; }),
                   "steps[0].new_tokens[0]: -1 is out of range");
    expect_refused(edited(t,
                          [&](json& j) {
                              json& last = j.at("tokens").at(j["tokens"].size() - 1);
                              last = (last.get<int>() + 1) % vocab;
                          }),
                   "token_out: not the session's token");
    expect_refused(edited(t, [](json& j) { j["steps"][2]["kv"]["len"] = 200; }),
                   "steps[2].kv.len: 200 is out of range");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["kv"]["n_layers"] = 3; }),
                   "steps[1].kv.n_layers");
    expect_refused(edited(t, [](json& j) { j["steps"][0]["attention"]["rows"] = 1000; }),
                   "steps[0].attention.rows");
    expect_refused(
        edited(t,
               [](json& j) { j.at("steps").at(0).at("attention").at("weights").at(1).erase(0); }),
        "not [n_heads]");
    expect_refused(
        edited(t, [](json& j) { j["steps"][2]["attention"]["weights"][0][0][0][0] = 7; }),
        "out of range");
    expect_refused(
        edited(t, [](json& j) { j.at("steps").at(1).at("kv_rows").at("values").erase(0); }),
        "steps[1].kv_rows.values: not an array of");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["q_rows"]["values"][0] = "x"; }),
                   "not a number");
    expect_refused(edited(t,
                          [](json& j) {
                              j["steps"][1]["logits"] = json::array({1, 2});
                          }),
                   "steps[1].logits: not an array of " + std::to_string(vocab));
    expect_refused(edited(t, [](json& j) { j["steps"][1]["ops"][3]["timed_with"] = 9; }),
                   "steps[1].ops[3].timed_with");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["ops"][0]["op"] = "teleport"; }),
                   "not an op kvscope logs");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["time"]["wall_s"] = -1; }),
                   "steps[1].time.wall_s: -1 is out of range (0");
    // Numbers beyond their field's type are quoted as the file has them, with the range.
    expect_refused(edited(t, [](json& j) { j["model"]["dim"] = 18446744073709551615ull; }),
                   "model.dim: 18446744073709551615 is out of range (1..16384)");
    expect_refused(edited(t, [](json& j) { j["model"]["dim"] = 1e300; }),
                   "model.dim: 1e+300 is not a whole number (1..16384)");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["index"] = 5; }), "steps[1].index");
    expect_refused(edited(t, [](json& j) { j["steps"][1]["phase"] = "prefill"; }),
                   "the prefill is step 0 and only step 0");
    expect_refused(edited(t, [](json& j) { j["model"]["n_heads"] = 3; }), "model");
    expect_refused(edited(t, [](json& j) { j["model"]["dim"] = 1 << 20; }), "model.dim");
    expect_refused(edited(t, [](json& j) { j["model"]["toy"] = true; }),
                   "says toy, with shapes that are not the toy's");
    expect_refused(edited(t, [](json& j) { j["model"]["vocab_size"] = 10; }), "out of range");
    expect_refused(edited(t, [](json& j) { j["token_pieces"][0] = std::string(5000, 'x'); }),
                   "longer than 4096 bytes");
    expect_refused(edited(t, [](json& j) { j["steps"][2]["payload_evicted"] = true; }),
                   "payload_evicted, yet a payload is there");
    expect_refused(edited(t, [](json& j) { j["twin"] = 5; }), "twin: not an object");
    // Junk after a NUL byte (nlohmann's parser stops at one): refused, not ignored.
    expect_refused(t + std::string("\0junk", 5),
                   "a NUL byte at byte " + std::to_string(t.size()) + ": not JSON text");
    // A step whose payload the recording dropped is read without one.
    const RecordedRun evicted =
        read_trace_json(edited(t,
                               [](json& j) {
                                   auto& s = j.at("steps").at(1);
                                   for (const char* k : {"attention", "logits", "kv_rows", "q_rows",
                                                         "attn_out", "projections", "ops"})
                                       s.erase(k);
                                   s["payload_evicted"] = true;
                               }),
                        "e.json");
    CHECK(evicted.sessions[0].trace.steps()[1].payload_evicted);
    CHECK(evicted.sessions[0].trace.evicted_steps() == 1);
}

TEST_CASE("trace files: folders, devices, foreign and oversized files are refused in one line",
          "[trace][replay][hostile]") {
    const auto dir = test::temp_dir("trace-files");
    CHECK_THROWS_WITH(read_trace_file(dir.string()), Catch::Contains("is a folder"));
    CHECK_THROWS_WITH(read_trace_file("/dev/zero"), Catch::Contains("not a regular file"));
    CHECK_THROWS_WITH(read_trace_file((dir / "none.json").string()),
                      Catch::Contains("cannot open"));
    test::write_file(dir / "model.json", {'G', 'G', 'U', 'F'});
    CHECK_THROWS_WITH(read_trace_file((dir / "model.json").string()),
                      Catch::Contains("not a kvscope trace"));
    CHECK_FALSE(looks_like_trace((dir / "model.json").string()));
    const std::string t = cached_trace(2);
    test::write_file(dir / "t.json", std::vector<unsigned char>(t.begin(), t.end()));
    CHECK(looks_like_trace((dir / "t.json").string()));
    // More than a third of the memory available (KVSCOPE_MEM_AVAILABLE stands for it).
    setenv("KVSCOPE_MEM_AVAILABLE", "30000", 1);
    CHECK_THROWS_WITH(read_trace_file((dir / "t.json").string()),
                      Catch::Contains("is more than kvscope reads here"));
    unsetenv("KVSCOPE_MEM_AVAILABLE");
    CHECK(read_trace_file((dir / "t.json").string()).sessions[0].trace.steps().size() == 2);
}

TEST_CASE("trace events: one complete event per op per step inside its step, a track a session",
          "[trace][replay]") {
    const RecordedRun run = read_trace_json(compare_trace(4), "c.json");
    std::ostringstream os;
    write_trace_events(os, run.view());
    const json j = json::parse(os.str());
    REQUIRE(j.at("traceEvents").is_array());
    std::map<int, std::string> tracks;
    std::map<int, std::vector<json>> steps;
    std::size_t ops = 0;
    for (const json& e : j.at("traceEvents")) {
        if (e.at("ph") == "M" && e.at("name") == "thread_name")
            tracks[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
        if (e.at("ph") != "X") continue;
        CHECK(e.at("ts").get<double>() >= 0);
        CHECK(e.at("dur").get<double>() >= 0);
        if (e.at("cat") == "step") steps[e.at("tid").get<int>()].push_back(e);
        if (e.at("cat") != "op") continue;
        ++ops;
        const json& a = e.at("args");
        for (const char* k : {"step", "layer", "in", "out", "flops"}) CHECK(a.contains(k));
        // Inside its step's slice on its own track.
        const json& parent = steps[e.at("tid").get<int>()].at(a.at("step").get<std::size_t>());
        const double ts = e.at("ts").get<double>(), end = ts + e.at("dur").get<double>();
        CHECK(ts >= parent.at("ts").get<double>() - 1e-6);
        CHECK(end <= parent.at("ts").get<double>() + parent.at("dur").get<double>() + 1e-3);
    }
    CHECK(tracks == std::map<int, std::string>{{1, "with KV cache"}, {2, "without KV cache"}});
    // Laid end to end: each step starts where the one before it ended and lasts at least its
    // measured wall time; its first op starts with it, each op with a call of its own where the
    // one before ended, an op inside another's call with that call.
    for (const auto& [tid, list] : steps) {
        double end = 0;
        for (const json& st : list) {
            CHECK(std::fabs(st.at("ts").get<double>() - end) < 1e-3);
            CHECK(st.at("dur").get<double>() >=
                  st.at("args").at("wall_s").get<double>() * 1e6 - 1e-3);
            end = st.at("ts").get<double>() + st.at("dur").get<double>();
        }
    }
    std::map<std::pair<int, int>, double> op_end;  // (track, step) -> where the next op starts
    std::map<std::tuple<int, int, int>, double> op_ts;
    for (const json& e : j.at("traceEvents")) {
        if (e.at("ph") != "X" || e.at("cat") != "op") continue;
        const int tid = e.at("tid").get<int>(), step = e.at("args").at("step").get<int>();
        const double ts = e.at("ts").get<double>();
        op_ts[{tid, step, e.at("args").at("op").get<int>()}] = ts;
        if (e.at("args").contains("timed_with")) {
            CHECK(ts == op_ts.at({tid, step, e.at("args").at("timed_with").get<int>()}));
            continue;
        }
        const auto key = std::make_pair(tid, step);
        if (!op_end.count(key)) op_end[key] = steps[tid].at(step).at("ts").get<double>();
        CHECK(std::fabs(ts - op_end[key]) < 1e-3);
        op_end[key] = ts + e.at("dur").get<double>();
    }
    std::size_t logged = 0;
    for (const RecordedSession& s : run.sessions) {
        REQUIRE(steps[s.mode == CacheMode::Cached ? 1 : 2].size() == s.trace.steps().size());
        for (const StepRecord& r : s.trace.steps()) logged += r.ops.ops.size();
    }
    CHECK(logged > 0);
    CHECK(ops == logged);
}

TEST_CASE("CSV: the attention matrix as the heatmap reads it, one line per step",
          "[trace][replay]") {
    const RecordedRun run = read_trace_json(compare_trace(4), "c.json");
    const auto& steps = run.sessions[0].trace.steps();
    const int last = static_cast<int>(steps.size()) - 1;
    std::ostringstream a;
    write_attention_csv(a, steps, last, 1, 3, run.model->tokenizer());
    const AttentionMatrixRows m = collect_attention_rows(steps, last);
    std::istringstream lines(a.str());
    std::string line;
    std::getline(lines, line);
    CHECK(line.rfind("position,token,1,2,", 0) == 0);
    for (int q = 0; q < m.n; ++q) {
        REQUIRE(std::getline(lines, line));
        const std::vector<std::string> cells = csv_cells(line);
        REQUIRE(cells.size() == static_cast<std::size_t>(m.n) + 2);
        CHECK(cells[0] == std::to_string(q + 1));
        for (int k = 0; k < m.n; ++k) {
            if (k > q)
                CHECK(cells[k + 2].empty());  // masked
            else
                CHECK(std::stof(cells[k + 2]) == attention_cell(m, 1, 3, q, k).weight);
        }
    }
    CHECK_THROWS_WITH(write_attention_csv(a, steps, last, 9, 0, run.model->tokenizer()),
                      Catch::Contains("layer 9, head 0 is not in the trace"));
    std::ostringstream s;
    write_steps_csv(s, run.view());
    const std::string csv = s.str();
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * static_cast<int>(steps.size()));
    CHECK(csv.find("\n1," + std::to_string(last) + ",decode,uncached,") != std::string::npos);
}
