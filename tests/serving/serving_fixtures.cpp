#include "tests/serving/serving_fixtures.h"

#include <catch2/catch.hpp>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/util/splitmix64.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

namespace kvs::test {

const Model& serving_model() {
    return shared_tiny_model();
}

std::vector<int> serving_ids(std::uint64_t seed, int n) {
    std::vector<int> out;
    std::uint64_t s = seed;
    for (int i = 0; i < n; ++i) out.push_back(3 + int(splitmix64_next(s) % 290));
    return out;
}

std::vector<int> serving_alone(const std::vector<int>& prompt, int max_new) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = max_new;
    Session s(serving_model(), be, cfg);
    s.set_prompt_tokens(prompt);
    while (!s.finished()) s.step();
    return s.tokens();
}

std::vector<std::vector<int>> shared_prefix_prompts() {
    std::vector<std::vector<int>> out;
    const std::vector<int> prefix = serving_ids(7, 20);
    for (int i = 0; i < 8; ++i) {
        std::vector<int> p = prefix;
        for (int t : serving_ids(100 + i, i + 1)) p.push_back(t);
        out.push_back(p);
    }
    return out;
}

std::vector<ServeRequest> serve_all(const std::vector<std::vector<int>>& prompts, ServeConfig cfg,
                                    ServeStats* stats) {
    CpuBackend be;
    Scheduler s(serving_model(), be, cfg);
    for (const auto& p : prompts) s.submit(p);
    while (!s.finished()) s.step();
    CHECK(s.blocks().free_blocks() == s.blocks().n_blocks());  // every block back in the queue
    if (stats) *stats = s.stats();
    return s.requests();
}

}  // namespace kvs::test
