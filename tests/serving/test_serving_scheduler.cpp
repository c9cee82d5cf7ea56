// The scheduler's rules, each with a run that breaks when the rule is broken: running requests'
// next rows before any admission; blocks taken as requests are admitted; nobody admitted in a
// step that preempted; a preempted request admitted again on what its first pass needs (a window's
// bound included); no request waits on another's prefix; a prefix kept after its request leaves;
// prompts chunked under a token budget; waiting counted by reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/serving/scheduler.h"
#include "core/serving/serve_run.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/serving/serving_fixtures.h"

using namespace kvs;
using test::serving_alone;
using test::serving_ids;
using test::serving_model;

namespace {

bool has(const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Steps `s` to the end, checking after each step what holds in every step: nobody preempted in
// the step it was admitted, nobody admitted in a step that preempted, the blocks held within
// the pool and each running request's table long enough for its rows.
void run_checked(Scheduler& s) {
    while (!s.finished()) {
        const ServeStep& st = s.step();
        INFO("step " << st.index);
        for (int id : st.preempted) CHECK_FALSE(has(st.admitted, id));
        if (!st.preempted.empty()) CHECK(st.admitted.empty());
        CHECK(st.used_blocks <= s.config().pool_blocks);
        for (const ServeRequest& r : s.requests())
            if (r.slot >= 0) CHECK(int(r.table.size()) * s.config().block_size >= r.len);
    }
}

}  // namespace

TEST_CASE("admission takes each request's blocks as it admits it: none is preempted at once",
          "[serving][scheduler]") {
    // Three requests whose first passes need 2 blocks of 4 each, in a pool of 5: two fit. Counted
    // against the blocks still free as it admits, the third waits for blocks; counted against
    // the pool as it was before the first admission, all three would be admitted and the third
    // preempted before computing anything.
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.pool_blocks = 5;
    cfg.max_new_tokens = 12;  // 8 + 11 rows: 5 blocks at most each
    CpuBackend be;
    Scheduler s(serving_model(), be, cfg);
    for (int i = 0; i < 3; ++i) s.submit(serving_ids(700 + i, 8));
    const ServeStep& first = s.step();
    CHECK(first.admitted.size() == 2);
    CHECK(first.preempted.empty());
    CHECK(first.queued == 1);
    CHECK(first.waited_for == WaitReason::Blocks);
    run_checked(s);
    for (int i = 0; i < 3; ++i)
        CHECK(s.requests()[i].tokens == serving_alone(serving_ids(700 + i, 8), 12));
}

TEST_CASE("running requests get their next rows' blocks before a waiting request is admitted",
          "[serving][scheduler]") {
    // A pool of 2 blocks of 4 rows. Request 1 (4 prompt tokens, 5 new: 8 rows, 2 blocks) holds
    // one block after its prefill and needs its second at step 1, when request 2 arrives needing
    // one block too. Its row comes first: request 2 waits for blocks; admitted first, it would
    // take the block and be preempted in that same step.
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.pool_blocks = 2;
    cfg.max_new_tokens = 5;
    CpuBackend be;
    Scheduler s(serving_model(), be, cfg);
    s.submit(serving_ids(710, 4));
    s.submit(serving_ids(711, 4), 1);
    s.step();
    const ServeStep& second = s.step();
    CHECK(second.index == 1);
    CHECK(second.admitted.empty());
    CHECK(second.preempted.empty());
    CHECK(second.decode_rows == 1);
    CHECK(second.waited_for == WaitReason::Blocks);
    run_checked(s);
    CHECK(s.stats().preemptions == 0);
    CHECK(s.requests()[1].tokens == serving_alone(serving_ids(711, 4), 5));
}

TEST_CASE("nobody is admitted in a step that preempted, in any pool size", "[serving][scheduler]") {
    // Six requests of 6 to 11 prompt tokens, 16 new each, in pools from barely one request's
    // blocks up: preemptions happen, and run_checked holds the rule at every step.
    int preemptions = 0;
    for (int pool = 7; pool <= 24; pool += 3) {
        INFO("pool " << pool);
        ServeConfig cfg;
        cfg.block_size = 4;
        cfg.pool_blocks = pool;
        cfg.max_new_tokens = 16;
        cfg.max_num_seqs = 4;
        cfg.prefix_caching = pool % 2 == 0;
        CpuBackend be;
        Scheduler s(serving_model(), be, cfg);
        for (int i = 0; i < 6; ++i) s.submit(serving_ids(720 + i, 6 + i));
        run_checked(s);
        preemptions += s.stats().preemptions;
        for (int i = 0; i < 6; ++i)
            CHECK(s.requests()[i].tokens == serving_alone(serving_ids(720 + i, 6 + i), 16));
    }
    CHECK(preemptions > 0);
}

TEST_CASE("a step that preempts admits nobody, though a place and blocks are free after it",
          "[serving][scheduler]") {
    // Two places, a pool of 8 blocks of 4 rows. Request 1 (4 prompt tokens) runs; request 2 (12)
    // and request 3 (4) arrive at step 1: 2 takes the second place, 3 waits for one. When 1
    // needs a block the pool does not have, 2 (admitted last) is preempted: its blocks and its
    // place come free, 1 takes one block, and 3 could start, but waits for the next step.
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.pool_blocks = 8;
    cfg.max_new_tokens = 20;  // request 2: 12 + 19 rows, 8 blocks at most
    cfg.max_num_seqs = 2;
    CpuBackend be;
    Scheduler s(serving_model(), be, cfg);
    s.submit(serving_ids(725, 4));
    s.submit(serving_ids(726, 12), 1);
    s.submit(serving_ids(727, 4), 1);
    int seen = 0;
    while (!s.finished()) {
        const ServeStep& st = s.step();
        if (st.preempted.empty()) continue;
        INFO("step " << st.index);
        CHECK(st.admitted.empty());
        CHECK(st.waited_for == WaitReason::Preemption);
        // Room for a first pass of 4 rows: a place and a block.
        if (int(st.preempted.size()) == 1 && s.blocks().free_blocks() >= 1) ++seen;
    }
    CHECK(seen > 0);
    CHECK(s.stats().waits[int(WaitReason::Preemption)] > 0);
    for (int i = 0; i < 3; ++i) CHECK(s.requests()[i].finish != FinishReason::None);
}

TEST_CASE("a request preempted under a window is admitted again on what its first pass needs",
          "[serving][scheduler]") {
    // Under a window a request holds its sinks' and its window's blocks however long it grows,
    // and one preempted is computed again as it first was: its prompt in one pass, then a row a
    // pass. So it comes back when its prompt's blocks are free, as it was first admitted. Sized by
    // all its tokens instead, it would wait for blocks its passes never hold at once, and once
    // it has more tokens than the pool has rows, for ever: the run would end "no request fits
    // the KV block pool".
    ServeConfig cfg;
    cfg.block_size = 2;
    cfg.window = 4;
    cfg.sinks = 2;
    cfg.max_new_tokens = 40;
    cfg.max_num_seqs = 3;
    CpuBackend be;
    const auto run = [&](int pool, int* early) {
        cfg.pool_blocks = pool;
        Scheduler s(serving_model(), be, cfg);
        for (int i = 0; i < 3; ++i) s.submit(serving_ids(730 + i, 4));
        while (!s.finished()) {
            const int free = s.blocks().free_blocks();
            const ServeStep& st = s.step();
            // Admitted again while its tokens' blocks were more than those free.
            for (int id : st.admitted) {
                const ServeRequest& r = s.requests()[id];
                const int all = (int(r.tokens.size()) + cfg.block_size - 1) / cfg.block_size;
                if (r.preempted > 0 && all > free) ++*early;
            }
        }
        return s.requests();
    };
    int unused = 0, early = 0;
    const auto roomy = run(0, &unused);  // a pool that never runs dry
    for (int pool = 5; pool <= 10; ++pool) {
        INFO("pool " << pool);
        const auto tight = run(pool, &early);
        for (int i = 0; i < 3; ++i) CHECK(tight[i].tokens == roomy[i].tokens);
    }
    CHECK(early > 0);
}

TEST_CASE("a prefix is found in the step it is scheduled: nobody waits for it",
          "[serving][scheduler]") {
    // Eight prompts sharing a 20-token prefix and one that shares nothing, nine places: all nine
    // start at step 0. The first computes the prefix's full block of 16 in that pass; the seven
    // others find it remembered as soon as it was scheduled and compute only the rest (their
    // rows read it after the first one's rows are written, layer by layer).
    auto prompts = test::shared_prefix_prompts();
    prompts.push_back(serving_ids(740, 9));
    ServeConfig cfg;
    cfg.max_new_tokens = 6;
    cfg.max_num_seqs = 9;
    CpuBackend be;
    Scheduler s(serving_model(), be, cfg);
    for (const auto& p : prompts) s.submit(p);
    const ServeStep& first = s.step();
    CHECK(first.admitted.size() == 9);
    CHECK(first.queued == 0);
    CHECK(first.cached_blocks_found == 7);
    int prompt_rows = 0;
    for (const auto& p : prompts) prompt_rows += int(p.size());
    CHECK(first.prefill_rows == prompt_rows - 7 * 16);
    while (!s.finished()) s.step();
    CHECK(s.stats().queued_requests == 0);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        CHECK(s.requests()[i].tokens == serving_alone(prompts[i], 6));
}

TEST_CASE("a prefix outlives its request: a request arriving after it finished finds it",
          "[serving][scheduler]") {
    // Two 20-token prompts sharing their first 18, the second arriving at step 60, long after the
    // first finished (6 new tokens): blocks of 4 keep rows 0..15 cached, 4 blocks found.
    const std::vector<int> a = serving_ids(750, 20);
    std::vector<int> b(a.begin(), a.begin() + 18);
    for (int t : serving_ids(751, 2)) b.push_back(t);
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = 6;
    CpuBackend be;
    const ServeRun run = run_serve(serving_model(), be, cfg, std::vector<std::vector<int>>{a, b},
                                   std::vector<int>{0, 60});
    CHECK(run.steps.back().index >= 60);
    CHECK(run.stats.cached_blocks_found == 4);
    CHECK(run.requests[1].cached_rows == 16);
    CHECK(run.most_cached_free >= 4);
    CHECK(run.requests[0].tokens == serving_alone(a, 6));
    CHECK(run.requests[1].tokens == serving_alone(b, 6));
    // Without the cache nothing is found.
    cfg.prefix_caching = false;
    const ServeRun none = run_serve(serving_model(), be, cfg, std::vector<std::vector<int>>{a, b},
                                    std::vector<int>{0, 60});
    CHECK(none.stats.cached_blocks_found == 0);
    CHECK(none.requests[1].tokens == run.requests[1].tokens);
}

TEST_CASE("cached blocks are evicted when the pool needs them, and texts stay as they were",
          "[serving][scheduler]") {
    // Ten requests one after another in a pool of 8 blocks of 4: each finds what the cache still
    // holds and takes the least recently freed cached blocks for its own rows.
    std::vector<std::vector<int>> prompts;
    std::vector<int> arrivals;
    for (int i = 0; i < 10; ++i) {
        prompts.push_back(serving_ids(760 + i % 3, 9));
        arrivals.push_back(10 * i);
    }
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.pool_blocks = 8;
    cfg.max_new_tokens = 8;
    CpuBackend be;
    const ServeRun run = run_serve(serving_model(), be, cfg, prompts, arrivals);
    CHECK(run.stats.evictions > 0);
    CHECK(run.stats.cached_blocks_found > 0);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        CHECK(run.requests[i].tokens == serving_alone(prompts[i], 8));
}

TEST_CASE("a token budget chunks long prompts over steps, running requests' rows first",
          "[serving][scheduler]") {
    // A budget of 8 rows a step: a running request's decode row goes in first, then what is left
    // of the budget for a prompt's next chunk.
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < 4; ++i) prompts.push_back(serving_ids(770 + i, 10 + 7 * i));
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = 10;
    cfg.max_num_batched_tokens = 8;
    CpuBackend be;
    const ServeRun run = run_serve(serving_model(), be, cfg, prompts);
    CHECK(run.chunked_steps > 0);
    CHECK(run.mixed_steps > 0);
    for (const ServeStep& st : run.steps) {
        CHECK(st.prefill_rows + st.decode_rows <= 8);
        // Decode rows come before any chunk in the pass.
        bool chunk_seen = false;
        for (const ServeChunk& c : st.chunks) {
            if (c.prefill) chunk_seen = true;
            if (!c.prefill) CHECK_FALSE(chunk_seen);
        }
    }
    CHECK(run.stats.waits[int(WaitReason::Budget)] > 0);
    for (std::size_t i = 0; i < prompts.size(); ++i)
        CHECK(run.requests[i].tokens == serving_alone(prompts[i], 10));
    // No budget: each prompt in one pass.
    cfg.max_num_batched_tokens = 0;
    CHECK(run_serve(serving_model(), be, cfg, prompts).chunked_steps == 0);
}

TEST_CASE("a budget below one block, or a window the pool or budget cannot hold, is refused",
          "[serving][scheduler]") {
    CpuBackend be;
    ServeConfig cfg;
    cfg.block_size = 8;
    cfg.max_num_batched_tokens = 7;
    CHECK_THROWS_WITH(Scheduler(serving_model(), be, cfg),
                      Catch::Contains("a token budget of 7 rows a step, less than one block of 8"));
    cfg.max_num_batched_tokens = -1;
    CHECK_THROWS_WITH(Scheduler(serving_model(), be, cfg), Catch::Contains("token budget of -1"));
    cfg.max_num_batched_tokens = 0;
    cfg.window = 20;
    cfg.sinks = 4;
    cfg.pool_blocks = 4;  // 1 + 3 + 1 blocks needed
    CHECK_THROWS_WITH(Scheduler(serving_model(), be, cfg),
                      Catch::Contains("a window of 20 rows and 4 sinks needs 5 blocks of 8 rows, "
                                      "more than the pool's 4"));
    cfg.pool_blocks = 0;
    cfg.max_num_batched_tokens = 8;
    Scheduler s(serving_model(), be, cfg);
    CHECK_THROWS_WITH(s.submit(serving_ids(780, 9)),
                      Catch::Contains("a window computes its prompt of 9 tokens in one pass"));
}

TEST_CASE("waiting is counted by its reason: places, budget, blocks, preemption",
          "[serving][scheduler]") {
    std::vector<std::vector<int>> prompts;
    for (int i = 0; i < 6; ++i) prompts.push_back(serving_ids(790 + i, 8));
    CpuBackend be;
    const auto waits = [&](ServeConfig cfg) {
        return run_serve(serving_model(), be, cfg, prompts).stats.waits;
    };
    ServeConfig cfg;
    cfg.block_size = 4;
    cfg.max_new_tokens = 12;
    cfg.max_num_seqs = 2;
    const auto places = waits(cfg);
    CHECK(places[int(WaitReason::Places)] > 0);
    CHECK(places[int(WaitReason::Blocks)] + places[int(WaitReason::Budget)] == 0);
    cfg.max_num_seqs = 8;
    cfg.max_num_batched_tokens = 8;
    CHECK(waits(cfg)[int(WaitReason::Budget)] > 0);
    cfg.max_num_batched_tokens = 0;
    cfg.pool_blocks = 9;
    const auto dry = waits(cfg);
    CHECK(dry[int(WaitReason::Blocks)] > 0);
    CHECK(dry[int(WaitReason::Preemption)] > 0);
}
