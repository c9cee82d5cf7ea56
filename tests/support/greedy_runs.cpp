#include "tests/support/greedy_runs.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

namespace kvs::test {

GreedyRun greedy_run(const Model& m, const std::string& prompt, int max_new) {
    CpuBackend be(false);
    SessionConfig cfg;
    cfg.max_new_tokens = max_new;
    Session s(m, be, cfg);
    s.set_prompt(prompt);
    GreedyRun r;
    while (!s.finished()) r.logits.push_back(s.step().logits);
    r.tokens = s.tokens();
    r.text = s.text();
    return r;
}

float max_logit_diff(const GreedyRun& a, const GreedyRun& b) {
    float d = 0;
    const std::size_t n = std::min(a.logits.size(), b.logits.size());
    for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(a.logits[i].size() == b.logits[i].size());
        for (std::size_t j = 0; j < a.logits[i].size(); ++j)
            d = std::max(d, std::abs(a.logits[i][j] - b.logits[i][j]));
    }
    return d;
}

std::vector<unsigned char> bytes_of(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace kvs::test
