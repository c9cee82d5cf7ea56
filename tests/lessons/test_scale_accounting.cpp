// Lesson 9's figures against a hand computation: Llama 2 7B, context 4096, batch 1, bf16, on an
// H100 SXM. Every number below is worked out in the comment above it from the shapes
// (dim d = 4096, hidden h = 11008, L = 32 layers, 32 heads, 32 K/V heads, head size 128,
// vocab V = 32000, separate classifier) and the datasheet (989.4e12 FLOP/s, 3.35e12 B/s).
#include <catch2/catch.hpp>

#include "core/loaders/model_loader.h"
#include "core/model/counts.h"
#include "core/util/error.h"
#include "lessonlib/lesson_parser.h"
#include "lessonlib/roofline.h"
#include "lessonlib/scale_accounting.h"

using namespace kvs;

namespace {
ScaleQuery llama2_7b_on_h100() {
    ScaleQuery q;
    q.model = "llama2-7b";
    q.gpu = "h100-sxm";
    q.context = 4096;
    q.batch = 1;
    q.bytes_per_value = 2;
    return q;
}
}  // namespace

TEST_CASE("scale accounting: Llama 2 7B at 4096 tokens on an H100, by hand", "[lesson][scale]") {
    const ScaleReport r = scale_report(llama2_7b_on_h100());

    // Parameters: embedding V*d = 32000*4096 = 131,072,000, and the classifier as many;
    // per layer: wq, wk, wv, wo 4*d^2 = 67,108,864; w1, w2, w3 3*h*d = 135,266,304;
    // two norms 2*d = 8,192; sum 202,383,360, times 32 = 6,476,267,520; final norm 4,096.
    // Total 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616.
    CHECK(r.params == 6738415616.0);
    // Weights at 2 bytes: 13,476,831,232 B.
    CHECK(r.weight_bytes == 13476831232.0);
    // KV per token: 2 (K, V) * 32 layers * 32 K/V heads * 128 * 2 B = 524,288 B (512 KiB);
    // times 4096 tokens: 2,147,483,648 B (2 GiB).
    CHECK(r.kv_bytes_per_token == 524288.0);
    CHECK(r.kv_bytes == 2147483648.0);
    // 13.48 GB + 2.15 GB = 15.6 GB fits in 80 GB.
    CHECK(r.fits);
    // Ridge point: 989.4e12 / 3.35e12 = 295.34 FLOP per byte.
    CHECK(r.ridge == Approx(295.343).epsilon(1e-5));

    // Decode step (query at position 4095, 4096 keys):
    //   linear weights per layer d^2 + 2*4096*d + d^2 + 3*h*d = 202,375,168; matmul FLOPs
    //   2 * 1 row * 32 * 202,375,168 = 12,952,010,752, plus the classifier 2*d*V = 262,144,000:
    //   13,214,154,752.
    //   attention 32 layers * 4 * d * 4096 keys = 2,147,483,648.
    //   small ops 32 * (8d + 3(d + 4096) + 6h + 2d) = 32 * 131,584 = 4,210,688, softmax
    //   32 * 32 heads * 4096 keys * 5 = 20,971,520, final norm 4d = 16,384: 25,198,592.
    //   Total 13,214,154,752 + 2,147,483,648 + 25,198,592 = 15,386,836,992 FLOPs.
    CHECK(r.decode.flops == 15386836992.0);
    CHECK(r.decode.attention_flops == 2147483648.0);
    //   bytes: weights 13,476,831,232 + K/V read 2 B * 32 * 2 * 4096 * 4096 rows = 2,147,483,648
    //   + K/V written 2 * 32 * 2 * 4096 * 1 = 524,288: 15,624,839,168.
    CHECK(r.decode.bytes == 15624839168.0);
    //   intensity 15,386,836,992 / 15,624,839,168 = 0.9848 FLOP/B, far below 295: memory-bound;
    //   15,624,839,168 B / 3.35e12 B/s = 4.664 ms against 15.55 us of compute.
    CHECK(r.decode.intensity == Approx(0.984768).epsilon(1e-5));
    CHECK(r.decode.memory_bound);
    CHECK(r.decode.seconds() == Approx(4.664131e-3).epsilon(1e-5));
    CHECK(r.decode.compute_seconds == Approx(15.5517e-6).epsilon(1e-4));

    // Prefill of 4096 tokens (keys summed over rows: 4096 * 4097 / 2 = 8,390,656):
    //   matmul 2 * 4096 * 32 * 202,375,168 + 262,144,000 = 53,051,698,184,192;
    //   attention 32 * 4 * 4096 * 8,390,656 = 4,399,120,252,928;
    //   small 32 * 4096 * 131,584 + 32 * 32 * 8,390,656 * 5 + 16,384 = 60,207,153,152;
    //   total 57,511,025,590,272 FLOPs.
    CHECK(r.prefill.flops == 57511025590272.0);
    CHECK(r.prefill.attention_flops == 4399120252928.0);
    //   bytes: weights + K/V read 4096 rows + written 4096 rows = 13,476,831,232 + 2 *
    //   2,147,483,648 = 17,771,798,528; intensity 3,236 FLOP/B > 295: compute-bound, 57.51e12 /
    //   989.4e12 = 58.13 ms.
    CHECK(r.prefill.bytes == 17771798528.0);
    CHECK_FALSE(r.prefill.memory_bound);
    CHECK(r.prefill.intensity == Approx(3236.08).epsilon(1e-5));
    CHECK(r.prefill.seconds() == Approx(58.12717e-3).epsilon(1e-5));
}

TEST_CASE("scale accounting: batch shares the weights, GQA shrinks the cache", "[lesson][scale]") {
    ScaleQuery q = llama2_7b_on_h100();
    const ScaleReport one = scale_report(q);
    q.batch = 8;
    const ScaleReport eight = scale_report(q);
    // FLOPs grow with the batch; the weights are read once: bytes = weights + 8 x K/V traffic.
    CHECK(eight.decode.flops == 8 * one.decode.flops);
    CHECK(eight.decode.bytes == one.weight_bytes + 8 * (one.decode.bytes - one.weight_bytes));
    CHECK(eight.kv_bytes == 8 * one.kv_bytes);
    CHECK(eight.decode.intensity > one.decode.intensity);

    // Llama 2 70B keeps 8 K/V heads for 64 query heads: 2 * 80 * 8 * 128 * 2 B = 327,680 B per
    // token, less than the 7B model's 524,288 although it has 10x the parameters.
    q = llama2_7b_on_h100();
    q.model = "llama2-70b";
    const ScaleReport big = scale_report(q);
    CHECK(big.kv_bytes_per_token == 327680.0);
    // 68,976,648,192 parameters * 2 B = 137.95 GB: not on one 80 GB H100.
    CHECK(big.params == 68976648192.0);
    CHECK_FALSE(big.fits);

    // Llama 3.1 70B at its full 128K context: 327,680 B * 131,072 = 42,949,672,960 B of cache.
    q.model = "llama3.1-70b";
    q.context = 131072;
    q.gpu = "h200-sxm";
    CHECK(scale_report(q).kv_bytes == 42949672960.0);
}

TEST_CASE("scale accounting rejects what it does not know", "[lesson][scale]") {
    ScaleQuery q = llama2_7b_on_h100();
    q.model = "gpt-17";
    CHECK_THROWS_AS(scale_report(q), Error);
    q = llama2_7b_on_h100();
    q.gpu = "abacus";
    CHECK_THROWS_AS(scale_report(q), Error);
    q = llama2_7b_on_h100();
    q.context = 8192;  // Llama 2 was trained for 4096
    CHECK_THROWS_WITH(scale_report(q), "Llama 2 7B has a context of 4096 tokens, not 8192");
}

TEST_CASE("@scale model=loaded: the lesson's own model's shapes, its roofline neighbours too",
          "[lesson][scale]") {
    // The default model's shapes (dim 128, 4 layers, 8 heads, hidden 384, vocab 512, context 256
    // as tests/model/test_default_model.cpp has them), as lesson 2's last step asks for them.
    const auto model = open_model("default");
    const ModelConfig& c = model->config();
    ScaleQuery q;
    q.model = kLoadedModel;
    q.gpu = "h100-sxm";
    q.context = 20;
    const ScaleModel m = scale_model_of(model->name(), c);
    const ScaleReport r = scale_report(q, m);
    CHECK(r.model.name == model->name());
    CHECK(r.params == double(c.parameter_count()));
    CHECK(r.prefill.flops == count_llama_forward(c, 0, 20, 2).flops);
    CHECK(r.decode.flops == count_llama_forward(c, 19, 1, 2).flops);
    CHECK(r.prefill.memory_bound);
    // Not a preset: looked up by key it is unknown; past the model's context it is refused.
    CHECK_THROWS_AS(scale_report(q), Error);
    q.context = c.seq_len + 1;
    CHECK_THROWS_WITH(scale_report(q, m), model->name() + " has a context of " +
                                              std::to_string(c.seq_len) + " tokens, not " +
                                              std::to_string(c.seq_len + 1));

    // The roofline's neighbours are the same model (a lookup by key would have thrown): prefill
    // at 2, 5 and 10 tokens, decode at batch 4 to 256, each its own scale_report.
    const Roofline roof = roofline_of_scale(r);
    REQUIRE(roof.points.size() == 9);
    q.context = 10;
    CHECK(roof.points[6].context == 10);
    CHECK(roof.points[6].intensity == scale_report(q, m).prefill.intensity);
    CHECK(roof.points[7].asked);
    CHECK(roof.points[7].intensity == r.prefill.intensity);

    // Parsed without a model (its context is checked when the step plays).
    const Lesson l =
        parse_lesson("# t\n\n## s\n\n@scale model=loaded context=9999 gpu=h100-sxm\n", "t.md");
    CHECK(l.steps.at(0).directives.at(0).scale.model == kLoadedModel);
    CHECK_THROWS_WITH(parse_lesson("# t\n\n## s\n\n@scale model=mine gpu=h100-sxm\n", "t.md"),
                      Catch::Contains("unknown model 'mine' (known: loaded, llama2-7b"));
}
