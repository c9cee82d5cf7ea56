// What one decode step asks of the CUDA runtime, counted through the emulated
// backend, which mirrors the cuda backend call for call: with the whole trace on (attention and
// K/V rows) a step is one device-to-host copy and one stream sync; the kernel launches are
// 3 + 16 per layer (embed, the final rmsnorm and the classifier, and per layer rmsnorm, q/k/v,
// rope, kv_append, attention (two: split over the keys, then combine), wo, add, rmsnorm, w1, w3,
// swiglu, w2, add); two strided
// device-to-device copies gather the K and V rows of every layer; nothing is allocated or freed.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

LaunchCounts decode_step_counts(const Model& model, CacheMode mode, const char* prompt) {
    EmulatedCudaBackend be;
    // The ops one by one, as with the op strip on; the same step as a CUDA Graph and through the
    // fused kernels is counted in tests/cuda/test_cuda_graphs.cpp and test_cuda_fused.cpp (a
    // session would otherwise also time those paths after the step).
    be.set_graphs_on(false);
    be.set_fused_on(false);
    SessionConfig cfg;
    cfg.mode = mode;
    cfg.max_new_tokens = 8;
    // Counted per run of the step: the timing re-runs (core/session/step_timing.h) repeat the same
    // work and are measured once here.
    cfg.timing.runs = 1;
    Session s(model, be, cfg);
    s.set_prompt(prompt);
    s.step();  // prefill
    s.step();  // first decode step: buffers grown for decoding
    be.reset_counts();
    s.step();
    return be.counts();
}

void print(const char* what, const LaunchCounts& c) {
    std::printf(
        "%s per decode token: %d launches, %d H2D, %d D2H, %d D2D copies, %d syncs, "
        "%d allocs, %d frees\n",
        what, c.launches, c.h2d, c.d2h, c.d2d, c.syncs, c.allocs, c.frees);
}

}  // namespace

TEST_CASE("a cached decode step: one device-to-host copy, one sync, 3 + 16 L launches",
          "[emulated][counts]") {
    std::vector<std::pair<std::string, std::unique_ptr<Model>>> models;
    models.emplace_back("tiny", test::open_tiny_model("counts"));
    if (std::filesystem::exists(test::stories_model()))
        models.emplace_back("stories260K",
                            open_model(test::stories_model(), test::stories_tokenizer()));
    for (const auto& [name, model] : models) {
        INFO(name);
        const LaunchCounts c = decode_step_counts(*model, CacheMode::Cached, "ab");
        print((name + ", cached").c_str(), c);
        CHECK(c.d2h == 1);
        CHECK(c.syncs == 1);
        CHECK(c.launches == 3 + 16 * model->config().n_layers);
        CHECK(c.d2d == 2 * model->config().n_layers + 2);
        CHECK(c.h2d == 1);  // the token id
        CHECK(c.allocs == 0);
        CHECK(c.frees == 0);
    }
}

TEST_CASE(
    "an uncached decode step: one copy back and one sync for the step, one more for the "
    "trace's comparison of the held K/V rows",
    "[emulated][counts]") {
    const auto model = test::open_tiny_model("counts-nc");
    const LaunchCounts c = decode_step_counts(*model, CacheMode::Uncached, "ab");
    print("tiny, uncached", c);
    // The session reads the rows the cache held before recomputing them (outside the timed
    // forward pass): gathered by two copies, one download.
    CHECK(c.d2h == 2);
    CHECK(c.syncs == 2);
    // The last query row of each layer's attention, q and attention output, then K and V.
    CHECK(c.d2d == 3 * model->config().n_layers + 2 + 2);
}
