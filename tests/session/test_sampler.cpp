#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <span>

#include "core/session/sampler.h"

using namespace kvs;

TEST_CASE("greedy picks the largest logit, the lowest id on ties", "[sampler]") {
    Sampler s({0.0f, 0, 0.9f, 1});
    const std::vector<float> l{0.5f, 2.0f, 2.0f, -1.0f};
    const Draw d = s.sample(l);
    CHECK(d.token == 1);
    CHECK(d.coin < 0);
}

TEST_CASE("sampling is reproducible by seed and follows the distribution", "[sampler]") {
    const std::vector<float> l{0.0f, 1.0f, 2.0f, 3.0f};
    Sampler a({1.0f, 0, 0.0f, 7}), b({1.0f, 0, 0.0f, 7});
    std::map<int, int> counts;
    for (int i = 0; i < 4000; ++i) {
        const Draw da = a.sample(l), db = b.sample(l);
        CHECK(da.token == db.token);
        CHECK(da.coin == db.coin);
        CHECK(da.coin >= 0.0f);
        CHECK(da.coin < 1.0f);
        ++counts[da.token];
    }
    // softmax(0,1,2,3) = 0.032, 0.087, 0.237, 0.644
    CHECK(counts[3] > 2300);
    CHECK(counts[3] < 2850);
    CHECK(counts[0] < 250);
}

TEST_CASE("top-k and top-p keep only the most likely tokens", "[sampler]") {
    const std::vector<float> l{0.0f, 1.0f, 2.0f, 3.0f, 2.9f};
    Sampler k({1.0f, 2, 0.0f, 3});
    Sampler p({1.0f, 0, 0.5f, 3});
    for (int i = 0; i < 500; ++i) {
        const int tk = k.sample(l).token;
        CHECK((tk == 3 || tk == 4));
        const int tp = p.sample(l).token;  // 3 and 4 hold about 0.7 of the mass
        CHECK((tp == 3 || tp == 4));
    }
}

TEST_CASE("reseeding replays the same draws", "[sampler]") {
    const std::vector<float> l{0.1f, 0.2f, 0.3f};
    Sampler s({0.8f, 0, 0.9f, 99});
    std::vector<int> first;
    for (int i = 0; i < 20; ++i) first.push_back(s.sample(l).token);
    s.reseed();
    for (int i = 0; i < 20; ++i) CHECK(s.sample(l).token == first[i]);
}

TEST_CASE("the one softmax: weights summing to 1, masked keys 0, no key no distribution",
          "[sampler][softmax]") {
    const std::vector<float> x{0.0f, 1.0f, 2.0f, 3.0f};
    std::vector<float> p(4);
    CHECK(softmax(x, p));
    double z = 0;
    for (float v : x) z += std::exp(double(v) - 3.0);
    for (int i = 0; i < 4; ++i)
        CHECK(p[i] == Approx(std::exp(double(x[i]) - 3.0) / z).epsilon(1e-6));
    // Large scores do not overflow: the max is subtracted first.
    std::vector<float> big{1000.0f, 1000.0f};
    CHECK(softmax(std::span<float>(big)));
    CHECK(big == std::vector<float>{0.5f, 0.5f});
    // A key masked with -inf gets exactly 0; the others share the mass.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> m{-inf, 0.0, -inf, 0.0};
    CHECK(softmax(std::span<double>(m)));
    CHECK(m == std::vector<double>{0.0, 0.5, 0.0, 0.5});
    // Every key masked: no distribution, all 0 (not NaN).
    std::vector<double> none{-inf, -inf};
    CHECK_FALSE(softmax(std::span<double>(none)));
    CHECK(none == std::vector<double>{0.0, 0.0});
}
