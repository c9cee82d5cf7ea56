// A paged KV cache, continuous batching and prefix sharing give every request exactly what it
// gets alone: the same K/V rows in other places, read through block tables.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "core/loaders/model_loader.h"
#include "core/model/kv_blocks.h"
#include "core/serving/cache_effect.h"
#include "core/serving/prompt_file.h"
#include "core/serving/scheduler.h"
#include "core/serving/serve_run.h"
#include "core/serving/serve_trace.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/serving/serving_fixtures.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {
const Model& tiny() {
    return test::serving_model();
}
std::vector<int> ids(std::uint64_t seed, int n) {
    return test::serving_ids(seed, n);
}
std::vector<int> alone(const std::vector<int>& prompt, int max_new) {
    return test::serving_alone(prompt, max_new);
}
using test::shared_prefix_prompts;
std::vector<ServeRequest> serve(const std::vector<std::vector<int>>& prompts, ServeConfig cfg,
                                ServeStats* stats = nullptr) {
    return test::serve_all(prompts, cfg, stats);
}
}  // namespace

TEST_CASE("a paged KV cache gives the contiguous cache's results bit for bit", "[serving]") {
    const ModelConfig& c = tiny().config();
    REQUIRE(c.n_kv_heads < c.n_heads);  // GQA: query heads share kv heads
    const std::vector<int> prompt = ids(3, 11);
    for (int bs : {1, 3, 4, 7, 16, 64}) {
        INFO("block size " << bs);
        CpuBackend be;
        auto contiguous = tiny().make_batch_runner(be, 1);
        const int n_blocks = (c.seq_len + bs - 1) / bs;
        KvBlockPool pool(be, c.n_layers, n_blocks + 3, bs, c.kv_dim());
        auto paged = tiny().make_paged_runner(be, 1, pool);
        // A table of blocks out of order, so a row's place differs from its position.
        std::vector<int> table;
        for (int b = n_blocks + 2; b >= 0; --b) table.push_back(b);
        std::vector<int> tokens = prompt;
        int len = 0;
        Capture want;  // every capture: attention rows, K/V rows, q and the attention output
        want.op_log = false;
        for (int step = 0; step < 6; ++step) {
            const std::span<const int> rows(tokens.data() + len, tokens.size() - len);
            ForwardResult a, b;
            contiguous->forward_batch(std::span<const SeqInput>(std::vector<SeqInput>{{0, rows}}),
                                      want, std::span<ForwardResult>(&a, 1));
            paged->set_blocks(0, table, len);
            paged->forward_batch(std::span<const SeqInput>(std::vector<SeqInput>{{0, rows}}), want,
                                 std::span<ForwardResult>(&b, 1));
            REQUIRE(a.logits == b.logits);
            CHECK(a.kv_rows == b.kv_rows);
            CHECK(a.q_rows == b.q_rows);
            CHECK(a.attn_out == b.attn_out);
            for (int l = 0; l < c.n_layers; ++l)
                for (int h = 0; h < c.n_heads; ++h)
                    for (int r = 0; r < int(rows.size()); ++r) {
                        const auto x = a.attention.row(l, h, r), y = b.attention.row(l, h, r);
                        CHECK(std::equal(x.begin(), x.end(), y.begin(), y.end()));
                    }
            len = static_cast<int>(tokens.size());
            tokens.push_back(static_cast<int>(std::max_element(a.logits.begin(), a.logits.end()) -
                                              a.logits.begin()));
        }
        // The rows the blocks hold, read back through the table, are the contiguous cache's.
        std::vector<float> x, y;
        contiguous->read_kv_rows(0, 0, len, x);
        paged->read_kv_rows(0, 0, len, y);
        CHECK(x == y);
    }
}

TEST_CASE("a paged slot refuses a table too short for its rows", "[serving]") {
    const ModelConfig& c = tiny().config();
    CpuBackend be;
    KvBlockPool pool(be, c.n_layers, 4, 4, c.kv_dim());
    auto paged = tiny().make_paged_runner(be, 1, pool);
    const std::vector<int> table{0};
    paged->set_blocks(0, table, 0);
    const std::vector<int> prompt = ids(1, 5);
    ForwardResult r;
    const SeqInput in{0, prompt};
    CHECK_THROWS_WITH(paged->forward_batch(std::span<const SeqInput>(&in, 1), Capture{},
                                           std::span<ForwardResult>(&r, 1)),
                      Catch::Contains("too few for 5 rows"));
    CHECK_THROWS_WITH(paged->set_blocks(0, table, 5), Catch::Contains("holds no 5 rows"));
    CHECK_THROWS_WITH(paged->set_blocks(0, std::vector<int>{9}, 0), Catch::Contains("no KV block"));
}

TEST_CASE("requests sharing a prefix generate what each generates alone", "[serving]") {
    const auto prompts = shared_prefix_prompts();
    ServeConfig cfg;
    cfg.max_new_tokens = 12;
    for (const bool sharing : {true, false}) {
        INFO("prefix sharing " << sharing);
        cfg.prefix_caching = sharing;
        ServeStats st;
        const auto reqs = serve(prompts, cfg, &st);
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            INFO("request " << i);
            CHECK(reqs[i].tokens == alone(prompts[i], 12));
        }
        if (sharing) {
            // The 20-token prefix: one full block of 16 found in the cache by the 7 requests
            // after the first, in the step the first computes it (the partly filled block
            // after it is no prefix block: each request computes those rows itself).
            CHECK(st.cached_blocks_found == 7);
            CHECK(st.cached_rows == 7 * 16);
        } else {
            CHECK(st.cached_blocks_found == 0);
        }
        CHECK(st.peak_blocks < st.contiguous_blocks());
        CHECK(st.generated == 8 * 12);
    }
}

TEST_CASE("a request admitted after another retires reuses its blocks at once", "[serving]") {
    // Batch limit 2 over 5 requests: each later request waits for a place, and the pool never
    // holds more than two requests' blocks.
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < 5; ++i) prompts.push_back(ids(50 + i, 6 + i));
    ServeConfig cfg;
    cfg.max_new_tokens = 5 + 3;
    cfg.max_num_seqs = 2;
    cfg.block_size = 4;
    ServeStats st;
    const auto reqs = serve(prompts, cfg, &st);
    for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(reqs[i].tokens == alone(prompts[i], 8));
    CHECK(st.queued_requests == 3);
    CHECK(st.peak_running == 2);
    CHECK(st.peak_blocks <= 2 * ((10 + 8 - 1 + 3) / 4));
}

TEST_CASE("a pool that runs dry preempts, and the preempted request's text is unchanged",
          "[serving]") {
    // 3 requests of 10 prompt tokens, 20 new each (29 rows, 8 blocks of 4), in a pool of 12
    // blocks: all three are admitted (3 blocks each), then the pool runs dry as they grow.
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < 3; ++i) prompts.push_back(ids(200 + i, 10));
    ServeConfig cfg;
    cfg.max_new_tokens = 20;
    cfg.block_size = 4;
    cfg.pool_blocks = 12;
    ServeStats st;
    const auto reqs = serve(prompts, cfg, &st);
    CHECK(st.preemptions > 0);
    CHECK(st.peak_blocks <= 12);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        INFO("request " << i << ", preempted " << reqs[i].preempted << " times");
        CHECK(reqs[i].tokens == alone(prompts[i], 20));
    }
}

TEST_CASE("serving refuses what cannot run, one reason each", "[serving]") {
    CpuBackend be;
    const auto refuse = [&](ServeConfig cfg, const char* why) {
        CHECK_THROWS_WITH(Scheduler(tiny(), be, cfg), Catch::Contains(why));
    };
    ServeConfig cfg;
    cfg.block_size = 0;
    refuse(cfg, "block size 0 (must be 1..64");
    cfg.block_size = 65;
    refuse(cfg, "block size 65");
    cfg.block_size = 16;
    cfg.max_num_seqs = 0;
    refuse(cfg, "max-num-seqs 0");
    cfg.max_num_seqs = 8;
    cfg.pool_blocks = 2;
    cfg.max_new_tokens = 30;
    Scheduler s(tiny(), be, cfg);
    CHECK_THROWS_WITH(s.submit(ids(1, 20)), Catch::Contains("may need 4 blocks of 16 rows, more "
                                                            "than the pool's 2"));
    CHECK_THROWS_WITH(s.submit({}), Catch::Contains("the prompt is empty"));
    CHECK_THROWS_WITH(s.submit(ids(1, 65)), Catch::Contains("longer than the model's context"));
    CHECK_THROWS_WITH(s.step(), Catch::Contains("every request has finished"));
}

TEST_CASE("a bounded cache lets blocks go, replays a preempted request, and measures its effect",
          "[serving]") {
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < 3; ++i) prompts.push_back(ids(300 + i, 6));
    ServeConfig cfg;
    cfg.max_new_tokens = 40;
    cfg.block_size = 4;
    ServeStats full;
    serve(prompts, cfg, &full);
    // A window as long as the context sees every row: the full cache's texts.
    cfg.window = 64;
    const auto wide = serve(prompts, cfg);
    for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(wide[i].tokens == alone(prompts[i], 40));
    // 8 rows and 2 sinks: blocks between them let go, so fewer are held at the peak.
    cfg.window = 8;
    cfg.sinks = 2;
    ServeStats bounded;
    const auto roomy = serve(prompts, cfg, &bounded);
    CHECK(bounded.peak_blocks < full.peak_blocks);
    CHECK(bounded.peak_blocks <= 3 * (1 + 8 / 4 + 2));
    // A pool that runs dry: the preempted request is computed again as it first was.
    cfg.pool_blocks = 9;
    ServeStats tight;
    const auto replayed = serve(prompts, cfg, &tight);
    CHECK(tight.preemptions > 0);
    for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(replayed[i].tokens == roomy[i].tokens);
    // The effect on the next token, measured on the same tokens: none for a window over every
    // row, some for 8 rows.
    CpuBackend be;
    const auto& t = roomy[0].tokens;
    const std::span<const int> seen(t.data(), t.size());
    const CacheEffect same = window_effect(tiny(), be, seen, 6, 0, 64, 4);
    CHECK(same.max_logit_difference == 0);
    CHECK(same.same_next_token == same.passes);
    const CacheEffect e = window_effect(tiny(), be, seen, 6, 2, 8, 4);
    CHECK(e.passes == int(t.size()) - 6 + 1);
    CHECK(e.max_logit_difference > 0);
    ServeConfig bad;
    bad.sinks = 2;
    CHECK_THROWS_WITH(Scheduler(tiny(), be, bad), Catch::Contains("the window must be at least 1"));
}

TEST_CASE("one serving run to its end: what the CLI and the lessons read", "[serving]") {
    // Three places for the eight shared-prefix prompts arriving a step apart: the first three
    // start as they arrive, the other five wait for a place; each joins while others decode, its
    // prompt rows and their decode rows in one pass.
    const auto prompts = shared_prefix_prompts();
    ServeConfig cfg;
    cfg.max_new_tokens = 6;
    cfg.max_num_seqs = 3;
    cfg.block_size = 4;
    CpuBackend be;
    const std::vector<int> arrivals{0, 1, 2, 3, 4, 5, 6, 7};
    const ServeRun run = run_serve(tiny(), be, cfg, prompts, arrivals);
    REQUIRE(run.requests.size() == 8);
    CHECK(run.config.pool_blocks == 3 * 64 / 4);  // resolved: 3 contexts of 64 rows
    CHECK(run.stats.queued_requests == 5);
    CHECK(run.stats.waits[int(WaitReason::Places)] > 0);
    CHECK(run.steps.front().admitted.size() == 1);
    CHECK(run.mixed_steps > 0);
    int mixed = 0;
    for (const ServeStep& s : run.steps) mixed += s.prefill_rows > 0 && s.decode_rows > 0;
    CHECK(run.mixed_steps == mixed);
    CHECK(run.blocks_saved() == run.stats.contiguous_blocks() - run.stats.peak_blocks);
    // The tables shown: the requests still running after that step, each table long enough
    // for its rows, and the blocks they hold together at most the pool's.
    REQUIRE(run.shown_step >= 0);
    REQUIRE(!run.shown_tables.empty());
    CHECK(run.shown_steps_run >= 1);
    CHECK(run.steps.at(run.shown_steps_run - 1).index == run.shown_step);
    CHECK(int(run.shown_tables.size()) <= cfg.max_num_seqs);
    for (const TableSnapshot& t : run.shown_tables)
        CHECK(int(t.table.size()) == (t.rows + cfg.block_size - 1) / cfg.block_size);
    CHECK(requests_same_as_alone(tiny(), be, run) == 8);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        CHECK(run.requests[i].tokens == alone(prompts[i], 6));
    // A run whose tokens are not what the prompt gives alone is counted out.
    ServeRun changed = run;
    changed.requests[2].tokens.back() ^= 1;
    CHECK(requests_same_as_alone(tiny(), be, changed) == 7);
    CHECK(serve_window_effect(tiny(), be, run).passes == 0);  // no window, nothing compared
}

TEST_CASE("a quantised cache serves every request, each row the same whatever pass computed it",
          "[serving][kv_quant]") {
    const auto prompts = shared_prefix_prompts();
    const ModelConfig& c = tiny().config();
    for (KvCacheType t : {KvCacheType::Int8, KvCacheType::Fp8}) {
        INFO(kv_cache_type_name(t));
        ServeConfig cfg;
        cfg.max_new_tokens = 12;
        cfg.cache_type = t;
        ServeStats st;
        const auto shared = serve(prompts, cfg, &st);
        // K and V x layers x (kv_dim bytes + a 4-byte scale), from the shapes.
        CHECK(st.bytes_per_row == std::size_t(2) * c.n_layers * (c.kv_dim() + 4));
        CHECK(st.cached_blocks_found == 7);
        for (const ServeRequest& r : shared) CHECK(r.finish != FinishReason::None);
        // Attention reads every row as the cache holds it, so sharing a prefix, computing it
        // apart, or a preempted request computed again in one pass give the same texts.
        cfg.prefix_caching = false;
        cfg.block_size = 4;
        const auto apart = serve(prompts, cfg);
        for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(apart[i].tokens == shared[i].tokens);
        cfg.pool_blocks = 24;
        cfg.max_num_seqs = 3;
        ServeStats tight;
        const auto replayed = serve(prompts, cfg, &tight);
        CHECK(tight.preemptions > 0);
        for (std::size_t i = 0; i < prompts.size(); ++i)
            CHECK(replayed[i].tokens == shared[i].tokens);
    }
}

TEST_CASE("a quantised cache's rows and logits do not depend on how the passes split them",
          "[serving][kv_quant]") {
    const ModelConfig& c = tiny().config();
    const std::vector<int> tokens = ids(500, 12);
    for (KvCacheType t : {KvCacheType::Int8, KvCacheType::Fp8}) {
        INFO(kv_cache_type_name(t));
        CpuBackend be;
        KvBlockPool pool(be, c.n_layers, 6, 4, c.kv_dim(), t);
        auto whole = tiny().make_paged_runner(be, 1, pool);
        auto by_row = tiny().make_paged_runner(be, 1, pool);
        const std::vector<int> a{0, 1, 2}, b{3, 4, 5};
        // The 12 tokens in one pass, and one token a pass: the same last logits and rows.
        ForwardResult x, y;
        const SeqInput all{0, tokens};
        whole->set_blocks(0, a, 0);
        whole->forward_batch(std::span<const SeqInput>(&all, 1), Capture{},
                             std::span<ForwardResult>(&x, 1));
        for (int p = 0; p < 12; ++p) {
            const SeqInput one{0, std::span<const int>(tokens).subspan(p, 1)};
            by_row->set_blocks(0, b, p);
            by_row->forward_batch(std::span<const SeqInput>(&one, 1), Capture{},
                                  std::span<ForwardResult>(&y, 1));
        }
        CHECK(x.logits == y.logits);
        std::vector<float> rows_a, rows_b;
        whole->read_kv_rows(0, 0, 12, rows_a);
        by_row->read_kv_rows(0, 0, 12, rows_b);
        CHECK(rows_a == rows_b);
    }
}

TEST_CASE("a quantised cache's effect on the next token is measured against float32",
          "[serving][kv_quant]") {
    CpuBackend be;
    const std::vector<int> prompt = ids(400, 8);
    const std::vector<int> tokens = alone(prompt, 40);
    // Through float32 "quantised": the same cache, no difference.
    const CacheEffect same = cache_type_effect(tiny(), be, tokens, 8, KvCacheType::F32, 4);
    CHECK(same.passes == int(tokens.size()) - 8 + 1);
    CHECK(same.max_logit_difference == 0);
    CHECK(same.same_next_token == same.passes);
    for (KvCacheType t : {KvCacheType::Int8, KvCacheType::Fp8}) {
        INFO(kv_cache_type_name(t));
        const CacheEffect e = cache_type_effect(tiny(), be, tokens, 8, t, 4);
        CHECK(e.passes == same.passes);
        CHECK(e.max_logit_difference > 0);
    }
    // On the default model, int8 moves the logits a little and keeps the greedy token.
    const auto model = open_model("default");
    const std::vector<int> story =
        model->tokenizer().encode("Once upon a time, there was a little");
    std::vector<int> seen = story;
    {
        SessionConfig cfg;
        cfg.max_new_tokens = 30;
        Session s(*model, be, cfg);
        s.set_prompt_tokens(story);
        while (!s.finished()) s.step();
        seen = s.tokens();
    }
    const CacheEffect e =
        cache_type_effect(*model, be, seen, int(story.size()), KvCacheType::Int8, 16);
    CHECK(e.max_logit_difference > 0);
    CHECK(e.max_logit_difference < 0.5);
    CHECK(e.same_next_token >= e.passes - 1);
    CHECK_THROWS_WITH(cache_type_effect(tiny(), be, tokens, 0, KvCacheType::Int8, 4),
                      Catch::Contains("effect measured on"));
}

TEST_CASE(
    "requests join the queue at their arrival step, and steps with nothing to run are skipped",
    "[serving]") {
    CpuBackend be;
    ServeConfig cfg;
    cfg.max_new_tokens = 4;
    Scheduler s(tiny(), be, cfg);
    const auto a = ids(600, 5), b = ids(601, 7), c = ids(602, 3);
    s.submit(a, 2);   // after two steps with nothing to run
    s.submit(b, 20);  // after a has finished (4 steps from step 2)
    s.submit(c, 3);   // while a runs
    while (!s.finished()) s.step();
    const auto when = [&](int id) {
        for (const ServeStep& st : s.steps())
            if (std::find(st.admitted.begin(), st.admitted.end(), id) != st.admitted.end()) {
                CHECK(std::find(st.arrived.begin(), st.arrived.end(), id) != st.arrived.end());
                return st.index;
            }
        return -1;
    };
    CHECK(when(0) == 2);
    CHECK(when(1) == 20);
    CHECK(when(2) == 3);
    // Steps 0, 1 and those between c's end and b's arrival held nothing: skipped.
    CHECK(s.steps().front().index == 2);
    CHECK(s.steps().size() == 5 + 4);  // steps 2..6 (a, and c from 3), then 20..23 (b)
    for (const ServeStep& st : s.steps()) CHECK(st.prefill_rows + st.decode_rows > 0);
    CHECK(s.requests()[0].tokens == alone(a, 4));
    CHECK(s.requests()[1].tokens == alone(b, 4));
    CHECK(s.requests()[2].tokens == alone(c, 4));
    CHECK(s.stats().queued_requests == 0);  // none waited for a place once it had arrived
    CHECK_THROWS_WITH(s.submit(a, -1), Catch::Contains("request 4: arrives at step -1"));
}

TEST_CASE("a serving shot holds each block's holders and rows as the pool and tables say",
          "[serving][serve_trace]") {
    for (const bool sharing : {true, false}) {
        ServeConfig cfg;
        cfg.block_size = 4;
        cfg.max_num_seqs = 4;
        cfg.pool_blocks = 40;
        cfg.max_new_tokens = 6;
        cfg.prefix_caching = sharing;
        CpuBackend be;
        Scheduler s(tiny(), be, cfg);
        for (const auto& p : shared_prefix_prompts()) s.submit(p);
        const ServeShot before = serve_shot(s);
        CHECK(before.step.index == -1);
        CHECK(before.used_blocks == 0);
        for (const auto& q : before.requests) CHECK(q.state == ServeState::Queued);
        int most_shared = 0, saw_queued_and_running = 0;
        while (!s.finished()) {
            s.step();
            const ServeShot shot = serve_shot(s);
            INFO("sharing " << sharing << ", step " << shot.step.index);
            // Each block's holders are its reference count; a free block has none.
            int used = 0, running = 0, queued = 0;
            for (int b = 0; b < s.blocks().n_blocks(); ++b) {
                const ServeBlockShot& blk = shot.blocks[b];
                const bool free =
                    std::find(blk.holders.begin(), blk.holders.end(), -1) != blk.holders.end();
                CHECK_FALSE(free);
                CHECK(blk.cached == s.blocks().cached(b));
                if (!blk.holders.empty()) {
                    ++used;
                    CHECK(s.blocks().refs(b) == static_cast<int>(blk.holders.size()));
                }
                CHECK(blk.rows >= 0);
                CHECK(blk.rows <= cfg.block_size);
            }
            CHECK(used == shot.used_blocks);
            // A block's written rows: the most any holder has in it (position p in row
            // p % block_size of block table[p / block_size]); a cached block no one holds, full.
            std::vector<int> want(s.blocks().n_blocks(), 0);
            for (int b = 0; b < s.blocks().n_blocks(); ++b)
                if (s.blocks().refs(b) == 0 && s.blocks().cached(b)) want[b] = cfg.block_size;
            for (const ServeRequest& r : s.requests())
                for (int p = 0; p < r.len; ++p) {
                    const int b = r.table[p / cfg.block_size];
                    want[b] = std::max(want[b], p % cfg.block_size + 1);
                }
            for (int b = 0; b < s.blocks().n_blocks(); ++b) CHECK(shot.blocks[b].rows == want[b]);
            CHECK(used == s.blocks().used_blocks());
            CHECK(shot.cached_free_blocks == s.blocks().cached_free_blocks());
            for (std::size_t i = 0; i < shot.requests.size(); ++i) {
                const ServeRequestShot& q = shot.requests[i];
                const ServeRequest& r = s.requests()[i];
                CHECK(q.table == r.table);
                CHECK(q.len == r.len);
                // A running request's rows fill its blocks in order: all but the last full.
                if (q.state == ServeState::Running) {
                    ++running;
                    REQUIRE(static_cast<int>(q.table.size()) * cfg.block_size >= q.len);
                    for (std::size_t j = 0; j * cfg.block_size < std::size_t(q.len); ++j)
                        CHECK(shot.blocks[q.table[j]].rows >=
                              std::min(cfg.block_size, q.len - int(j) * cfg.block_size));
                }
                if (q.state == ServeState::Queued) ++queued;
                if (q.state == ServeState::Finished) CHECK(q.table.empty());
            }
            CHECK(running == shot.running);
            CHECK(shot.contiguous_blocks == running * (64 / cfg.block_size));
            if (running > 0 && queued > 0) ++saw_queued_and_running;
            most_shared = std::max(most_shared, shot.multi_holder_blocks);
        }
        // Eight requests, four places: some wait while others run.
        CHECK(saw_queued_and_running > 0);
        // The 20-token prefix is 5 blocks of 4 rows, shared only when sharing is on.
        if (sharing)
            CHECK(most_shared >= 5);
        else
            CHECK(most_shared == 0);
        for (const auto& q : serve_shot(s).requests) CHECK(q.state == ServeState::Finished);
    }
}

TEST_CASE("a preempted request shows as preempted in its step's shot", "[serving][serve_trace]") {
    ServeConfig cfg;
    cfg.block_size = 2;
    cfg.max_num_seqs = 4;
    cfg.pool_blocks = 24;
    cfg.max_new_tokens = 20;
    cfg.prefix_caching = false;
    CpuBackend be;
    Scheduler s(tiny(), be, cfg);
    for (int i = 0; i < 4; ++i) s.submit(ids(40 + i, 8));
    int preempted = 0;
    while (!s.finished()) {
        const ServeStep& st = s.step();
        const ServeShot shot = serve_shot(s);
        for (int id : st.preempted) {
            CHECK(shot.requests[id].state == ServeState::Preempted);
            CHECK(shot.requests[id].table.empty());
            ++preempted;
        }
    }
    CHECK(preempted > 0);
}

TEST_CASE("the prompts file: one a line, blank lines skipped, none is an error",
          "[serving][serve_trace]") {
    const auto dir = test::temp_dir("serve-prompts");
    const auto write = [&](const char* name, const std::string& text) {
        const auto p = dir / name;
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    };
    const auto lines = read_prompt_file(write("a.txt", "one\r\n\n@3 two\nthree"));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].text == "one");
    CHECK(lines[1].text == "two");
    CHECK(lines[1].arrival == 3);
    CHECK(lines[2].text == "three");
    CHECK(lines[2].arrival == 0);
    CHECK_THROWS_WITH(read_prompt_file(write("c.txt", "one\n@x two\n")),
                      Catch::Contains("c.txt line 2"));
    CHECK_THROWS_WITH(read_prompt_file(write("b.txt", "\n\r\n")),
                      Catch::Contains("no prompts in the file"));
    CHECK_THROWS_AS(read_prompt_file((dir / "none.txt").string()), Error);
    // An editor's UTF-8 byte order mark is not part of the first prompt.
    CHECK(read_prompt_file(write("bom.txt", "\xEF\xBB\xBFone\n"))[0].text == "one");
    const auto builtin = builtin_serve_prompts();
    REQUIRE(builtin.size() == 8);
    for (const auto& p : builtin) CHECK(p.text.rfind(builtin[0].text.substr(0, 60), 0) == 0);
}

TEST_CASE("a request whose arrival step has not come shows as not arrived",
          "[serving][serve_trace]") {
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = 3;
    CpuBackend be;
    Scheduler s(tiny(), be, cfg);
    s.submit(ids(1, 6));
    s.submit(ids(2, 6), 2);
    CHECK(serve_shot(s).requests[1].state == ServeState::NotArrived);
    s.step();  // step 0
    CHECK(serve_shot(s).requests[1].state == ServeState::NotArrived);
    s.step();  // step 1
    CHECK(serve_shot(s).requests[1].state == ServeState::NotArrived);
    s.step();  // step 2: it arrives and is admitted
    CHECK(serve_shot(s).requests[1].state == ServeState::Running);
}
