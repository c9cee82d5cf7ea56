// Lesson 8's sweep keeps its last run's KV caches (lessonlib/batch_sweep.h): one per sequence,
// each the rows its own Session would hold after generating the same tokens alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/batch_sweep.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

TEST_CASE("the sweep's last run keeps each sequence's cache as the BatchSession holds it",
          "[batch][lessons]") {
    const auto model = test::open_tiny_model("batch-sweep");
    const ModelConfig& c = model->config();
    CpuBackend be;
    BatchPlan plan;
    plan.sizes = {1, 3};
    plan.decode_steps = 5;
    plan.repeats = 2;
    plan.prompts = {"the cat", "a", "the the cat at"};
    const BatchTable t = measure_batches(*model, be, plan);
    REQUIRE(t.last_run.size() == 3);  // the last size

    int longest_run = 0;  // generated tokens of the sequence that ran longest: the run's steps
    for (const BatchSequence& q : t.last_run)
        longest_run = std::max(longest_run, static_cast<int>(q.tokens.size()) - q.prompt_len);
    for (int i = 0; i < 3; ++i) {
        INFO("sequence " << i);
        const BatchSequence& q = t.last_run[i];
        // The same prompt alone, with the same limit (the sweep's decode steps + 1 new tokens).
        SessionConfig cfg;
        cfg.max_new_tokens = plan.decode_steps + 1;
        Session s(*model, be, cfg);
        s.set_prompt(plan.prompts[i]);
        while (!s.finished()) s.step();
        CHECK(q.tokens == s.tokens());
        CHECK(q.prompt_len == s.prompt_len());
        CHECK(q.finish == s.finish_reason());
        // Every token but the last one sampled went through the model and left its K/V rows.
        CHECK(q.kv.len == static_cast<int>(q.tokens.size()) - 1);
        CHECK(q.kv.len == s.trace().back().kv.len);
        CHECK(q.kv.n_layers == c.n_layers);
        CHECK(q.kv.n_kv_heads == c.n_kv_heads);
        CHECK(q.kv.head_dim == c.head_dim());
        CHECK(q.in_last_step == (static_cast<int>(q.tokens.size()) - q.prompt_len == longest_run));
        // Each row the cache holds is the row the Session's step wrote for that position.
        const int kv_dim = c.kv_dim(), len = q.kv.len;
        REQUIRE(q.kv_rows.size() == std::size_t(c.n_layers) * 2 * len * kv_dim);
        double worst = 0;
        int compared = 0;
        for (const StepRecord& r : s.trace().steps()) {
            const int kept = r.kv_rows_kept, first = r.kv.len - kept;
            for (int layer = 0; layer < c.n_layers; ++layer)
                for (int kv = 0; kv < 2; ++kv)
                    for (int k = 0; k < kept; ++k) {
                        const int p = first + k;
                        if (p >= len) continue;
                        for (int ch = 0; ch < kv_dim; ++ch) {
                            const float a =
                                q.kv_rows[((std::size_t(layer) * 2 + kv) * len + p) * kv_dim + ch];
                            const float b =
                                r.kv_rows[((std::size_t(layer) * 2 + kv) * kept + k) * kv_dim + ch];
                            worst = std::max(worst, double(std::fabs(a - b)));
                            ++compared;
                        }
                    }
        }
        CHECK(compared == c.n_layers * 2 * len * kv_dim);
        CHECK(worst <= 1e-5);
    }
}
