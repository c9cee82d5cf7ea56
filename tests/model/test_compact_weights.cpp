// Compact weights (core/model/compact_weights.h, --weights): the CPU matmul on F16, BF16 and Q8_0
// matrices, on every SIMD path, and whole models run with them.
//
// What holds, and why:
//  - bit for bit: a compact matmul equals the same path's float32 matmul on the matrix
//    dequantised by core's one decoder (dequantize_values), because every type widens to float
//    exactly (kernels/cpu/weight_rows.h) and the sums then run in the same order;
//  - against the float32 reference loops on the original floats, within the rounding of the
//    type: per element sum_j |x_j| * e_j, e_j = |w_j| 2^-11 for F16 (11 significant bits),
//    |w_j| 2^-8 for BF16 (8), and 0.57 d for Q8_0 (d = the block's max|w| / 127: round(w / d)
//    is within d / 2, and d stored as a half moves q d by at most 127 d 2^-11 = 0.062 d), plus
//    the float32 sums' own 2e-6 n (test_cpu_ops.cpp's tolerance);
//  - across paths, within each type: to rounding, as float32 (test_simd_paths.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <utility>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/loaders/gguf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/compact_weights.h"
#include "core/model/llama_weights.h"
#include "core/model/transformer_model.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/reference_ops.h"
#include "kernels/cpu/thread_pool.h"
#include "lessonlib/weight_types.h"
#include "tests/support/float_diff.h"
#include "tests/support/random_floats.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
using cpu::Isa;
using test::max_abs_diff;
using test::random_floats;
using test::same_bits;

namespace {

constexpr GgmlType kTypes[] = {GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0};

// A matrix [d, n] in `type` (core's one quantiser) and its values as core's decoder gives them.
struct Encoded {
    std::vector<unsigned char> bytes;
    std::vector<float> values;
};
Encoded encode(GgmlType type, const std::vector<float>& w) {
    Encoded e;
    e.bytes.resize(ggml_row_bytes(type, w.size()));
    encode_values(type, w.data(), w.size(), e.bytes.data());
    e.values.resize(w.size());
    dequantize_values(type, e.bytes.data(), w.size(), e.values.data());
    return e;
}

// The rounding bound above, for every output element.   x: [T, n], w: [d, n]
std::vector<float> bounds(GgmlType type, const std::vector<float>& x, const std::vector<float>& w,
                          int T, int n, int d) {
    std::vector<float> e(w.size());
    for (std::size_t b = 0; b < w.size(); b += 32) {
        float amax = 0;
        for (std::size_t j = b; j < std::min(w.size(), b + 32); ++j)
            amax = std::max(amax, std::abs(w[j]));
        for (std::size_t j = b; j < std::min(w.size(), b + 32); ++j)
            e[j] = type == GgmlType::F16    ? std::abs(w[j]) * 0x1p-11f
                   : type == GgmlType::BF16 ? std::abs(w[j]) * 0x1p-8f
                                            : 0.57f * amax / 127;
    }
    std::vector<float> out(std::size_t(T) * d);
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) {
            double s = 0;
            for (int j = 0; j < n; ++j)
                s += std::abs(x[std::size_t(t) * n + j]) * e[std::size_t(i) * n + j];
            out[std::size_t(t) * d + i] = float(s + 2e-6 * n);
        }
    return out;
}

// Rows of n values: whole Q8_0 blocks; for the 16-bit types a tail past the last 16 lanes too.
// d = 75: nine 8-row tiles and three rows left for the one-row dot.
int row_length(GgmlType type) {
    return type == GgmlType::Q8_0 ? 256 : 232;
}

}  // namespace

TEST_CASE("each matrix kind reads its own field: float32 views, compact copies, expanded back",
          "[compact]") {
    ModelConfig c;
    c.dim = 32, c.hidden_dim = 64, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2;
    c.vocab_size = 48, c.seq_len = 8, c.shared_classifier = false;
    // Written out here, apart from the code under test: kind -> the field that holds it.
    const std::pair<MatrixKind, const float * LlamaWeights::*> fields[] = {
        {MatrixKind::wq, &LlamaWeights::wq},
        {MatrixKind::wk, &LlamaWeights::wk},
        {MatrixKind::wv, &LlamaWeights::wv},
        {MatrixKind::wo, &LlamaWeights::wo},
        {MatrixKind::w1, &LlamaWeights::w1},
        {MatrixKind::w2, &LlamaWeights::w2},
        {MatrixKind::w3, &LlamaWeights::w3},
        {MatrixKind::wcls, &LlamaWeights::wcls},
        {MatrixKind::embedding, &LlamaWeights::token_embedding}};
    const std::pair<MatrixKind, std::vector<CompactMatrix> CompactWeights::*> lists[] = {
        {MatrixKind::wq, &CompactWeights::wq}, {MatrixKind::wk, &CompactWeights::wk},
        {MatrixKind::wv, &CompactWeights::wv}, {MatrixKind::wo, &CompactWeights::wo},
        {MatrixKind::w1, &CompactWeights::w1}, {MatrixKind::w2, &CompactWeights::w2},
        {MatrixKind::w3, &CompactWeights::w3}};
    // Field f's layer l holds the one value 10 f + l + 1 (exact in F16): a kind read from another
    // field, or another layer, reads another value.   each field: [layers, rows, n]
    const auto value = [](std::size_t f, int l) { return float(10 * f + l + 1); };
    const auto layers_of = [&](MatrixKind k) {
        return k == MatrixKind::wcls || k == MatrixKind::embedding ? 1 : c.n_layers;
    };
    std::vector<std::vector<float>> store;
    LlamaWeights w;
    for (std::size_t f = 0; f < std::size(fields); ++f) {
        const auto [rows, n] = matrix_shape(c, fields[f].first);
        auto& buf = store.emplace_back(layers_of(fields[f].first) * rows * n);
        for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = value(f, int(i / (rows * n)));
        w.*fields[f].second = buf.data();
    }
    for (std::size_t f = 0; f < std::size(fields); ++f)
        for (int l = 0; l < layers_of(fields[f].first); ++l) {
            INFO("float32 field " << f << " layer " << l);
            const auto [rows, n] = matrix_shape(c, fields[f].first);
            CHECK(float_matrix(c, w, fields[f].first, l) == w.*fields[f].second + l * rows * n);
        }
    CHECK(std::size(kLayerMatrixKinds) == std::size(lists));
    for (std::size_t i = 0; i < std::size(lists); ++i)
        CHECK(kLayerMatrixKinds[i] == lists[i].first);

    // Compact copies made from the float32 views: each kind's list is its own field and holds that
    // field's values.
    CompactWeights cw = compact_from_floats(c, w, GgmlType::F16);
    REQUIRE(cw.held());
    for (std::size_t f = 0; f < std::size(lists); ++f) {
        const MatrixKind k = lists[f].first;
        CHECK(cw.layers(k) == &(cw.*lists[f].second));
        for (int l = 0; l < c.n_layers; ++l) {
            INFO("compact field " << f << " layer " << l);
            const CompactMatrix m = cw.matrix(k, l);
            CHECK(m.data == (cw.*lists[f].second)[l].data);
            CHECK(m.type == GgmlType::F16);
            const auto [rows, n] = matrix_shape(c, k);
            std::vector<float> got(rows * n);
            dequantize_values(m.type, m.data, got.size(), got.data());
            CHECK(std::all_of(got.begin(), got.end(), [&](float v) { return v == value(f, l); }));
        }
    }
    CHECK(cw.layers(MatrixKind::wcls) == nullptr);
    CHECK(cw.matrix(MatrixKind::wcls, 0).data == cw.wcls.data);
    CHECK(cw.matrix(MatrixKind::embedding, 0).data == nullptr);  // the float32 table is kept

    // Expanded back to float32: every kind's field holds its own values again.
    const LlamaWeights e = expand_to_float32(c, w, cw);
    for (std::size_t f = 0; f < std::size(fields); ++f)
        for (int l = 0; l < layers_of(fields[f].first); ++l) {
            INFO("expanded field " << f << " layer " << l);
            const auto [rows, n] = matrix_shape(c, fields[f].first);
            const float* at = e.*fields[f].second + l * rows * n;
            CHECK(std::all_of(at, at + rows * n, [&](float v) { return v == value(f, l); }));
        }
}

TEST_CASE("compact matmul = float32 matmul of the dequantised matrix, bit for bit, every path",
          "[compact]") {
    // d = 1200: a matrix of 278,400 or more weights, which one token reads row by row.
    const int T = 7;
    cpu::ThreadPool pool(3);
    for (const int d : {75, 1200})
        for (GgmlType type : kTypes) {
            const int n = row_length(type);
            const auto x = random_floats(std::size_t(T) * n, 11);
            const auto w = random_floats(std::size_t(d) * n, 12, 0.1f);
            const Encoded e = encode(type, w);
            for (Isa isa : cpu::available_isas()) {
                const cpu::Kernels& k = *cpu::kernels_for(isa);
                INFO(ggml_type_name(type) << " on " << cpu::isa_name(isa) << ", d " << d);
                std::vector<float> want(std::size_t(T) * d), got(want.size()), one(want.size()),
                    threaded(want.size());
                k.matmul(want.data(), x.data(), e.values.data(), T, n, d, nullptr);
                k.matmul_compact(got.data(), x.data(), type, e.bytes.data(), T, n, d, nullptr);
                CHECK(same_bits(got, want));
                // a row alone and on threads: the same bits (as the float32 matmul guarantees)
                for (int t = 0; t < T; ++t)
                    k.matmul_compact(one.data() + std::size_t(t) * d, x.data() + std::size_t(t) * n,
                                     type, e.bytes.data(), 1, n, d, nullptr);
                CHECK(same_bits(one, want));
                k.matmul_compact(threaded.data(), x.data(), type, e.bytes.data(), T, n, d, &pool);
                CHECK(same_bits(threaded, want));
            }
        }
}

TEST_CASE("compact matmul is within its type's rounding of the float32 reference", "[compact]") {
    const int T = 5, d = 75;
    for (GgmlType type : kTypes) {
        const int n = row_length(type);
        const auto x = random_floats(std::size_t(T) * n, 21);
        const auto w = random_floats(std::size_t(d) * n, 22, 0.1f);
        const Encoded e = encode(type, w);
        std::vector<float> ref(std::size_t(T) * d);
        ref::matmul(ref.data(), x.data(), w.data(), T, n, d);
        const auto bound = bounds(type, x, w, T, n, d);
        for (Isa isa : cpu::available_isas()) {
            std::vector<float> got(ref.size());
            cpu::kernels_for(isa)->matmul_compact(got.data(), x.data(), type, e.bytes.data(), T, n,
                                                  d, nullptr);
            double worst = 0, worst_ratio = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
                worst = std::max(worst, double(std::abs(got[i] - ref[i])));
                worst_ratio = std::max(worst_ratio, std::abs(got[i] - ref[i]) / double(bound[i]));
            }
            INFO(ggml_type_name(type) << " on " << cpu::isa_name(isa) << ": max |difference| "
                                      << worst << ", " << worst_ratio << " of the bound");
            CHECK(worst_ratio <= 1.0);
            CHECK(worst > 0);  // the weights were rounded: a zero would mean float32 was read
        }
    }
}

TEST_CASE("the SIMD paths agree to rounding on compact weights", "[compact][simd]") {
    const std::vector<Isa> have = cpu::available_isas();
    const int T = 7, d = 75;
    for (GgmlType type : kTypes) {
        const int n = row_length(type);
        const auto x = random_floats(std::size_t(T) * n, 31);
        const auto w = random_floats(std::size_t(d) * n, 32, 0.1f);
        const Encoded e = encode(type, w);
        auto run = [&](Isa isa) {
            std::vector<float> out(std::size_t(T) * d);
            cpu::kernels_for(isa)->matmul_compact(out.data(), x.data(), type, e.bytes.data(), T, n,
                                                  d, nullptr);
            return out;
        };
        const auto widest = run(have.back());
        for (Isa isa : have) {
            INFO(ggml_type_name(type)
                 << ": " << cpu::isa_name(isa) << " against " << cpu::isa_name(have.back()));
            CHECK(max_abs_diff(run(isa), widest) <= 2e-6 * n);  // as float32's paths
        }
    }
}

TEST_CASE("a Q8_0 scale one half-ulp off is seen by the bit-for-bit check", "[compact]") {
    // The check above is the one that would catch a kernel reading a block's scale wrong: here
    // the bytes are changed instead, and the comparison notices.
    const int T = 2, n = 64, d = 8;
    const auto x = random_floats(std::size_t(T) * n, 41);
    const auto w = random_floats(std::size_t(d) * n, 42, 0.1f);
    Encoded e = encode(GgmlType::Q8_0, w);
    std::vector<float> want(std::size_t(T) * d), got(want.size());
    cpu::matmul(want.data(), x.data(), e.values.data(), T, n, d, nullptr);
    BlockQ8_0 blk;
    std::memcpy(&blk, e.bytes.data(), sizeof blk);
    blk.d += 1;  // the next half up
    std::memcpy(e.bytes.data(), &blk, sizeof blk);
    cpu::matmul_compact(got.data(), x.data(), GgmlType::Q8_0, e.bytes.data(), T, n, d, nullptr);
    CHECK_FALSE(same_bits(got, want));
}

TEST_CASE("Q4_0 and the K-quants on the float path: the float32 matmul of the dequantised matrix",
          "[compact]") {
    // Their fast path is the integer dot products (tests/files/test_kquants.cpp); this one, kept
    // for checking them, widens every weight through core's one decoder.
    const int T = 3, n = 512, d = 19;
    const auto x = random_floats(std::size_t(T) * n, 43);
    const auto w = random_floats(std::size_t(d) * n, 44, 0.1f);
    for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                          GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K}) {
        const Encoded e = encode(type, w);
        for (Isa isa : cpu::available_isas()) {
            INFO(ggml_type_name(type) << " on " << cpu::isa_name(isa));
            const cpu::Kernels& k = *cpu::kernels_for(isa);
            std::vector<float> want(std::size_t(T) * d), got(want.size());
            k.matmul(want.data(), x.data(), e.values.data(), T, n, d, nullptr);
            k.matmul_compact(got.data(), x.data(), type, e.bytes.data(), T, n, d, nullptr);
            CHECK(same_bits(got, want));
        }
    }
    CHECK_THROWS_WITH(weight_type_from_name("q9_k"),
                      "--weights: 'q9_k' is not one of f32, f16, bf16, q8_0, q4_0, q2_k, q3_k, "
                      "q4_k, q5_k, q6_k");
    CHECK(weight_type_from_name("BF16") == GgmlType::BF16);
    CHECK(weight_type_from_name("Q4_K") == GgmlType::Q4_K);
}

namespace {

// Greedy tokens of `m` after `prompt`, and the logits of every step, on one CPU backend.
struct Greedy {
    std::vector<int> tokens;
    std::vector<std::vector<float>> logits;
};
int argmax(const std::vector<float>& v) {
    return int(std::max_element(v.begin(), v.end()) - v.begin());
}
// Free-running greedy decoding, or (forced) fed the given tokens instead of its own choices;
// quantised weights through `dot` (the CPU's default integer path, or float).
Greedy run_greedy(const Model& m, const std::vector<int>& prompt, int steps,
                  const std::vector<int>* forced = nullptr,
                  cpu::DotPath dot = cpu::active_dot_path()) {
    CpuBackend be;
    be.set_dot_path(dot);
    auto r = m.make_runner(be);
    Capture want;
    want.attention = want.kv_rows = want.vectors = false;
    want.last_rows = 0;
    ForwardResult out;
    Greedy g;
    r->forward(prompt, want, out);
    for (int s = 0; s < steps; ++s) {
        g.logits.push_back(out.logits);
        g.tokens.push_back(argmax(out.logits));
        const int one[1] = {forced ? (*forced)[s] : g.tokens.back()};
        r->forward(one, want, out);
    }
    return g;
}
double max_diff(const Greedy& a, const Greedy& b) {
    double d = 0;
    for (std::size_t s = 0; s < a.logits.size(); ++s)
        d = std::max(d, max_abs_diff(a.logits[s], b.logits[s]));
    return d;
}

}  // namespace

TEST_CASE("stories260K: F16 and BF16 keep the greedy text, Q8_0 its logits within 0.5",
          "[compact][reference]") {
    if (!std::filesystem::exists(test::stories_model())) {
        WARN("no ../shared/models/stories260K.bin: not checked");
        return;
    }
    const auto f32 = open_model(test::stories_model(), test::stories_tokenizer());
    const std::vector<int> prompt = f32->tokenizer().encode("Once upon a time");
    // 128 tokens. Measured (generate --max-new-tokens 400 --trace-json, token by token): F16
    // keeps float32's text for all 342 tokens up to its end token; BF16 for the first 181;
    // Q8_0 for the first 110, hence its logits, not its text, are checked.
    const int steps = 128;
    const Greedy ref = run_greedy(*f32, prompt, steps);
    for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
        const auto m = open_model(test::stories_model(), test::stories_tokenizer(), type);
        const Greedy g = run_greedy(*m, prompt, steps);
        INFO(ggml_type_name(type) << ": max |logit difference| " << max_diff(ref, g));
        CHECK(g.tokens == ref.tokens);
    }
    // Q8_0: fed float32's tokens (a near-tie broken the other way would change every later
    // step); measured 0.29 at most over these steps.
    const auto q8 = open_model(test::stories_model(), test::stories_tokenizer(), GgmlType::Q8_0);
    const Greedy g = run_greedy(*q8, prompt, steps, &ref.tokens);
    const double d = max_diff(ref, g);
    INFO("Q8_0: max |logit difference| " << d);
    CHECK(d <= 0.5);
    CHECK(d > 0);
}

TEST_CASE("a GGUF's F16 and Q8_0 tensors are used in place and match its float32 reading exactly",
          "[compact][gguf]") {
    // The file's F16 tensors dequantised to float32 and multiplied (--weights f32) give the same
    // bits as the same tensors read as they are (as stored, or --weights f16): the widening is
    // exact (Q8_0 on the float path; its integer path is checked in tests/files/test_kquants.cpp).
    const auto dir = test::temp_dir("compact-gguf");
    const auto src = open_model("default");
    const auto& lm = dynamic_cast<const TransformerModel&>(*src);
    const std::vector<int> prompt = src->tokenizer().encode("Once upon a time");
    for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
        const auto path = (dir / (std::string(ggml_type_name(type)) + ".gguf")).string();
        write_gguf_llama(path, lm.config(), lm.weights(),
                         dynamic_cast<const BpeTokenizer&>(src->tokenizer()), type, "tiny");
        const auto as_f32 = open_model(path, {}, GgmlType::F32);
        for (const WeightsWanted want : {WeightsWanted{}, WeightsWanted{type}}) {
            const auto kept = open_model(path, {}, want);
            INFO(kept->format());
            // every matrix (7 per layer and the shared classifier = the token table) in place
            const std::string in_place =
                std::to_string(7 * lm.config().n_layers + 1) + " tensors used in place";
            CHECK(kept->format().find(in_place) != std::string::npos);
            const Greedy a = run_greedy(*as_f32, prompt, 20),
                         b = run_greedy(*kept, prompt, 20, nullptr, cpu::DotPath::float32);
            CHECK(a.tokens == b.tokens);
            CHECK(max_diff(a, b) == 0.0);
        }
    }
}

TEST_CASE("a step's weight bytes are the weights as kept: what info says a decode token reads",
          "[compact][gguf]") {
    const auto dir = test::temp_dir("compact-bytes");
    const auto src = open_model("default");
    const auto& lm = dynamic_cast<const TransformerModel&>(*src);
    const ModelConfig& c = lm.config();
    // Float32: every weight once, and a pass of T tokens T rows of the table (shared: the table is
    // the classifier, read whole once).
    CHECK(lm.count_forward(5, 1).weight_bytes == double(weight_bytes_per_token(c, lm.compact())));
    CHECK(weight_bytes_read(c, lm.compact(), 1) ==
          4 * std::uint64_t(c.parameter_count()) -
              (c.shared_classifier ? 0 : 4 * std::uint64_t(c.vocab_size) * c.dim) + 4 * c.dim);
    for (GgmlType type : {GgmlType::Q8_0, GgmlType::F16}) {
        const auto path = (dir / (std::string(ggml_type_name(type)) + ".gguf")).string();
        write_gguf_llama(path, c, lm.weights(), dynamic_cast<const BpeTokenizer&>(src->tokenizer()),
                         type, "tiny");
        const auto kept = open_model(path);
        const auto& km = dynamic_cast<const TransformerModel&>(*kept);
        INFO(kept->format());
        const double per_token = double(weight_bytes_per_token(km.config(), km.compact()));
        // A decode step reads what info prints; a prefill of T tokens T - 1 more table rows.
        const StepCounts d = kept->count_forward(7, 1), p = kept->count_forward(0, 6);
        CHECK(d.weight_bytes == per_token);
        CHECK(d.bytes == d.weight_bytes + d.kv_read_bytes + d.kv_write_bytes);
        const CompactMatrix& table = km.compact().embedding;  // or float32 rows
        const double row = table.data ? double(ggml_row_bytes(table.type, c.dim)) : 4.0 * c.dim;
        CHECK(p.weight_bytes == per_token + 5 * row);
        // Smaller than the float32 weights by about the type's ratio, never their float32 count.
        CHECK(d.weight_bytes < 0.6 * lm.count_forward(7, 1).weight_bytes);
        CHECK(d.weight_bytes >= double(km.compact().bytes));
    }
}

TEST_CASE(
    "compact weights on the CUDA kernels: f16 and bf16 read on the device, q8_0 expanded to "
    "float32 for it, the CPU's greedy text",
    "[compact][cli]") {
    // F16 and BF16 are copied to the device in 16 bits and widened as the kernels read them: the
    // CPU's greedy text with the same weights.
    for (const char* w : {"f16", "bf16"}) {
        INFO(w);
        const auto gpu = test::run_cli({"generate", "--backend", "cuda-emulated", "--weights", w,
                                        "--max-new-tokens", "12", "--prompt", "Once upon"});
        const auto cpu = test::run_cli({"generate", "--backend", "cpu", "--weights", w,
                                        "--max-new-tokens", "12", "--prompt", "Once upon"});
        CHECK(gpu.exit_code == 0);
        CHECK(gpu.out == cpu.out);
    }
    // A GGUF kept as stored in F16, its token table too (embed_compact on the device).
    const auto gguf = (test::temp_dir("compact-cuda") / "f16.gguf").string();
    REQUIRE(test::run_cli({"export", "--gguf", gguf, "--type", "f16"}).exit_code == 0);
    const auto g_gpu = test::run_cli({"generate", "--model", gguf, "--backend", "cuda-emulated",
                                      "--max-new-tokens", "12", "--prompt", "Once upon"});
    const auto g_cpu = test::run_cli({"generate", "--model", gguf, "--backend", "cpu",
                                      "--max-new-tokens", "12", "--prompt", "Once upon"});
    CHECK(g_gpu.exit_code == 0);
    CHECK(g_gpu.out == g_cpu.out);
    // Q8_0, which the kernels do not read, is expanded into the backend's float32 copy.
    const auto q8 = test::run_cli(
        {"generate", "--backend", "cuda-emulated", "--weights", "q8_0", "--max-new-tokens", "4"});
    CHECK(q8.exit_code == 0);
    CHECK(!q8.out.empty());
    const auto bad = test::run_cli({"generate", "--weights", "q4_1", "--max-new-tokens", "2"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("'q4_1' is not one of f32, f16, bf16, q8_0, q4_0") != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE(
    "the memory check counts compact weights as kept: float32 less the matrices' floats "
    "plus the matrices in their type",
    "[compact][memory]") {
    const auto f32 = open_model("default");
    const auto q8 = open_model("default", {}, GgmlType::Q8_0);
    const ModelConfig& c = f32->config();
    const std::uint64_t w = std::filesystem::file_size(default_model_path()) - 28;  // no header
    std::uint64_t matrix_floats = 0;
    for (MatrixKind k : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv, MatrixKind::wo,
                         MatrixKind::w1, MatrixKind::w2, MatrixKind::w3}) {
        const auto [rows, n] = matrix_shape(c, k);
        matrix_floats += std::uint64_t(c.n_layers) * rows * n;
    }
    REQUIRE(c.shared_classifier);  // its classifier is the embedding table, float32 either way
    const auto& kept = dynamic_cast<const TransformerModel&>(*q8).compact();
    CHECK(kept_weight_bytes(c, GgmlType::F32, w) == w);
    CHECK(kept_weight_bytes(c, GgmlType::Q8_0, w) == w - 4 * matrix_floats + kept.bytes);
    // Q8_0 (34 bytes a 32 weights) keeps each matrix weight in well under half its 4 bytes.
    CHECK(kept_weight_bytes(c, GgmlType::Q8_0, w) < w - 2 * matrix_floats);

    // A limit the float32 weights do not fit opens the same model kept Q8_0, and says the kept
    // size when even that does not fit.
    const std::string limit = std::to_string(w);
    ::setenv("KVSCOPE_MEM_AVAILABLE", limit.c_str(), 1);
    auto r = test::run_cli({"info", "--model", "default", "--backend", "cpu"});
    CHECK(r.exit_code == 2);
    r = test::run_cli({"info", "--model", "default", "--backend", "cpu", "--weights", "q8_0"});
    CHECK(r.exit_code == 0);
    ::setenv("KVSCOPE_MEM_AVAILABLE", "1000", 1);
    r = test::run_cli({"info", "--model", "default", "--backend", "cpu", "--weights", "q8_0"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("for weights (" +
                     format_bytes(double(kept_weight_bytes(c, GgmlType::Q8_0, w))) + ")") !=
          std::string::npos);
    ::unsetenv("KVSCOPE_MEM_AVAILABLE");
}

TEST_CASE(
    "the weight types measured: each kept in its type, fewer bytes a decode token from f32 to "
    "q4_K, each timed",
    "[compact]") {
    // The weight-types panel's table (lessonlib/weight_types.h): the default model (float32 in its
    // file) in each type the panel lists, each row's matrices kept as it asked, its bytes a decode
    // token counted from shapes, and its decode steps measured (no figure of time is judged).
    const auto m = open_model("default");
    const auto* llama = dynamic_cast<const TransformerModel*>(m.get());
    REQUIRE(llama);
    const std::vector<WeightsWanted> types = panel_weight_types(*llama);
    REQUIRE(types.size() == 4);  // f32, f16, q8_0, q4_k: a float32 file has no "as stored" row
    CpuBackend be;
    int between = 0;
    const auto runs = measure_weight_types(*llama, be, types, 3, [&] { ++between; });
    REQUIRE(runs.size() == types.size());
    // Q4_K's super-blocks are 256 wide: a narrower row is kept in Q4_0, as llama.cpp falls back.
    const char* kept[] = {"F32", "F16", "Q8_0", "Q4_"};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        INFO("type " << i << ": " << runs[i].kept);
        CHECK(runs[i].asked == types[i]);
        CHECK(runs[i].not_run.empty());
        CHECK(runs[i].steps == 3);
        CHECK(runs[i].step_seconds > 0);
        CHECK(runs[i].kept.find(kept[i]) != std::string::npos);
        if (i > 0) CHECK(runs[i].bytes_per_token < runs[i - 1].bytes_per_token);
    }
    CHECK(runs[0].bytes_per_token == weight_bytes_per_token(m->config(), CompactWeights{}));
    CHECK(between >= int(types.size()));  // asked before each type (and each timed step)
}
