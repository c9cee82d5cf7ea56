// A quantised KV cache's element conversions (core/model/kv_quant.h): fp8-e4m3 against OCP's
// E4M3FN values, int8 and fp8 rows within their rounding bounds, and the pool's compact bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/model/kv_blocks.h"
#include "core/model/kv_quant.h"
#include "core/util/error.h"
#include "core/util/splitmix64.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"

using namespace kvs;

TEST_CASE("fp8-e4m3 encodes and decodes OCP E4M3FN's values", "[kv_quant]") {
    struct Known {
        float x;
        std::uint8_t code;
    };
    const float sub = std::ldexp(1.0f, -9);  // the smallest subnormal
    const float inf = std::numeric_limits<float>::infinity();
    const Known table[] = {
        {0.0f, 0x00},
        {-0.0f, 0x80},
        {sub, 0x01},                   // subnormals: m x 2^-9
        {7 * sub, 0x07},               // the largest subnormal
        {std::ldexp(1.0f, -6), 0x08},  // the smallest normal
        {1.0f, 0x38},                  // exponent 7 = the bias
        {-1.0f, 0xB8},                 // the sign bit
        {1.125f, 0x39},                // 1 + 1/8
        {2.0f, 0x40},                  // 2^1
        {240.0f, 0x77},                // 1.875 x 2^7
        {448.0f, 0x7E},                // the largest finite: 1.75 x 2^8
        {-448.0f, 0xFE},               // and its negative
        {0.5f * sub, 0x00},            // half the smallest subnormal: a tie, to 0 (even)
        {1.5f * sub, 0x02},            // subnormal ties to the even code
        {2.5f * sub, 0x02},            // (both ways)
        {0.4f * sub, 0x00},            // nearest, not a tie
        {0.6f * sub, 0x01},            // (up)
        {1.0625f, 0x38},               // normal ties to the even mantissa: 1 + 1/16 to 1
        {1.1875f, 0x3A},               // 1 + 3/16 to 1 + 2/8
        {1.9375f, 0x40},               // a tie carried into the exponent: 1 + 15/16 to 2
        {464.0f, 0x7E},                // beyond 448: saturated, no infinity
        {500.0f, 0x7E},                // (any size)
        {1e30f, 0x7E},                 // (any size)
        {-1e30f, 0xFE},                // (either sign)
        {inf, 0x7E},                   // infinities too
        {-inf, 0xFE},                  // (either sign)
    };
    for (const Known& k : table) {
        INFO("x = " << k.x);
        CHECK(int(fp8_e4m3_encode(k.x)) == int(k.code));
    }
    CHECK(fp8_e4m3_decode(0x01) == sub);
    CHECK(fp8_e4m3_decode(0x08) == std::ldexp(1.0f, -6));
    CHECK(fp8_e4m3_decode(0x38) == 1.0f);
    CHECK(fp8_e4m3_decode(0x77) == 240.0f);
    CHECK(fp8_e4m3_decode(0x7E) == 448.0f);
    CHECK(fp8_e4m3_decode(0xFE) == -448.0f);
    CHECK(std::signbit(fp8_e4m3_decode(0x80)));
    CHECK(fp8_e4m3_encode(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
    CHECK(std::isnan(fp8_e4m3_decode(0x7F)));
    CHECK(std::isnan(fp8_e4m3_decode(0xFF)));
    // Every other code decodes to a value that encodes back to it.
    int finite = 0;
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7F) == 0x7F) continue;
        const float v = fp8_e4m3_decode(std::uint8_t(c));
        INFO("code " << c << " = " << v);
        REQUIRE(std::isfinite(v));
        CHECK(int(fp8_e4m3_encode(v)) == c);
        ++finite;
    }
    CHECK(finite == 254);
}

TEST_CASE("int8 and fp8 rows come back within their rounding bounds", "[kv_quant]") {
    std::uint64_t s = 11;
    const int n = 64;
    for (int trial = 0; trial < 50; ++trial) {
        // Rows of mixed magnitudes, some tiny values among large ones.
        std::vector<float> x(n), back(n);
        const float spread = std::ldexp(1.0f, int(splitmix64_next(s) % 20) - 10);
        for (float& v : x)
            v = spread * (float(splitmix64_next(s) % 20001) / 10000.0f - 1.0f) *
                (splitmix64_next(s) % 5 == 0 ? 1e-3f : 1.0f);
        float amax = 0;
        for (float v : x) amax = std::max(amax, std::fabs(v));
        std::vector<std::uint8_t> q(n);
        // int8: |x - x'| <= scale / 2, and the largest |x| comes back within float rounding.
        float scale = quantize_row(KvCacheType::Int8, x.data(), n, q.data());
        CHECK(scale == Approx(amax / 127).epsilon(1e-6));
        dequantize_row(KvCacheType::Int8, q.data(), scale, n, back.data());
        for (int i = 0; i < n; ++i) {
            INFO("int8, trial " << trial << ", x = " << x[i] << ", back " << back[i]);
            CHECK(std::fabs(x[i] - back[i]) <= 0.5f * scale * (1 + 1e-5f));
        }
        // fp8: within half a step of a 3-bit mantissa (1/16 of |x|), or of the subnormal step.
        scale = quantize_row(KvCacheType::Fp8, x.data(), n, q.data());
        CHECK(scale == Approx(amax / 448).epsilon(1e-6));
        dequantize_row(KvCacheType::Fp8, q.data(), scale, n, back.data());
        for (int i = 0; i < n; ++i) {
            INFO("fp8, trial " << trial << ", x = " << x[i] << ", back " << back[i]);
            const float bound = std::max(std::fabs(x[i]) / 16, scale * std::ldexp(1.0f, -10));
            CHECK(std::fabs(x[i] - back[i]) <= bound * (1 + 1e-5f));
        }
    }
    // A row of zeros: scale 0, zeros back.
    const std::vector<float> zeros(8, 0.0f);
    std::vector<std::uint8_t> q(8, 0xAA);
    std::vector<float> back(8, 1.0f);
    for (KvCacheType t : {KvCacheType::Int8, KvCacheType::Fp8}) {
        CHECK(quantize_row(t, zeros.data(), 8, q.data()) == 0.0f);
        dequantize_row(t, q.data(), 0.0f, 8, back.data());
        CHECK(back == zeros);
    }
}

TEST_CASE("a quantised block pool holds a byte a value and a scale a row", "[kv_quant]") {
    CpuBackend be;
    const int layers = 3, blocks = 5, bs = 4, kv_dim = 12;
    const KvBlockPool f32(be, layers, blocks, bs, kv_dim);
    const KvBlockPool i8(be, layers, blocks, bs, kv_dim, KvCacheType::Int8);
    const KvBlockPool f8(be, layers, blocks, bs, kv_dim, KvCacheType::Fp8);
    // Counted from the shapes: K and V x layers x rows x (kv_dim x 4, or kv_dim + 4) bytes.
    const std::size_t rows = std::size_t(blocks) * bs;
    CHECK(f32.bytes() == 2 * layers * rows * kv_dim * 4);
    CHECK(i8.bytes() == 2 * layers * rows * (kv_dim + 4));
    CHECK(f8.bytes() == i8.bytes());
    // Rows stored and loaded back: int8's error bound, through the pool's own layout.
    std::vector<float> k(2 * kv_dim), v(2 * kv_dim), k2(2 * kv_dim), v2(2 * kv_dim);
    std::uint64_t s = 5;
    for (std::size_t i = 0; i < k.size(); ++i) {
        k[i] = float(splitmix64_next(s) % 2001) / 1000.0f - 1.0f;
        v[i] = -k[i] * 3;
    }
    i8.store_rows(2, 9, 2, {k.data(), k.size()}, {v.data(), v.size()});
    i8.load_rows(2, 9, 2, {k2.data(), k2.size()}, {v2.data(), v2.size()});
    for (std::size_t i = 0; i < k.size(); ++i) {
        CHECK(std::fabs(k[i] - k2[i]) <= 1.0f / 127 / 2 * 1.0001f);
        CHECK(std::fabs(v[i] - v2[i]) <= 3.0f / 127 / 2 * 1.0001f);
    }
    // Another backend's rows go through its upload and download: the same values as the CPU's.
    BackendChoice emu = make_backend("cuda-emulated");
    KvBlockPool e8(*emu.backend, layers, blocks, bs, kv_dim, KvCacheType::Int8);
    DeviceBuffer dk(*emu.backend, k.size()), dv(*emu.backend, v.size());
    emu.backend->upload(dk.span(), k.data(), k.size());
    emu.backend->upload(dv.span(), v.data(), v.size());
    e8.store_rows(2, 9, 2, dk.span(), dv.span());
    DeviceBuffer bk(*emu.backend, k.size()), bv(*emu.backend, v.size());
    e8.load_rows(2, 9, 2, bk.span(), bv.span());
    std::vector<float> k3(k.size()), v3(v.size());
    emu.backend->download(k3.data(), bk.span(), k3.size());
    emu.backend->download(v3.data(), bv.span(), v3.size());
    CHECK(k3 == k2);
    CHECK(v3 == v2);
}

TEST_CASE("a pool's fixed scales: one per tensor or one per K channel, values beyond them clamped",
          "[kv_quant]") {
    CpuBackend be;
    const int layers = 2, blocks = 3, bs = 2, kv_dim = 4;
    const std::size_t rows = std::size_t(blocks) * bs;
    KvBlockPool tensor(be, layers, blocks, bs, kv_dim, KvCacheType::Int8, KvScaleMode::Tensor);
    KvBlockPool channel(be, layers, blocks, bs, kv_dim, KvCacheType::Int8, KvScaleMode::ChannelK);
    // Counted from the shapes: a byte a value; per row no scale (tensor) or V's (channel); the
    // fixed scales apart: 2 x layers floats, or layers x kv_dim.
    CHECK(tensor.bytes_per_row() == std::size_t(2) * layers * kv_dim);
    CHECK(channel.bytes_per_row() == std::size_t(layers) * (2 * kv_dim + 4));
    CHECK(tensor.bytes() == tensor.bytes_per_row() * rows + 2 * layers * 4);
    CHECK(channel.bytes() == channel.bytes_per_row() * rows + layers * kv_dim * 4);
    std::vector<float> k{1.0f, -2.0f, 0.5f, 8.0f}, v{0.25f, 0.5f, -1.0f, 2.0f};
    std::vector<float> k2(4), v2(4);
    // Stored before its scales: refused.
    CHECK_THROWS_WITH(tensor.store_rows(1, 3, 1, {k.data(), 4}, {v.data(), 4}),
                      Catch::Contains("before its scales are set"));
    CHECK_THROWS_WITH(tensor.set_scales({{1.0f}, {1.0f}}), Catch::Contains("wrong shape"));
    // K's scale puts 4 on 127: 8 is clamped to 4. V's puts 2 on 127.
    tensor.set_scales({{4.0f / 127, 4.0f / 127}, {2.0f / 127, 2.0f / 127}});
    tensor.store_rows(1, 3, 1, {k.data(), 4}, {v.data(), 4});
    tensor.load_rows(1, 3, 1, {k2.data(), 4}, {v2.data(), 4});
    CHECK(k2[3] == Approx(4.0f));
    CHECK(k2[1] == Approx(-2.0f).margin(2.0f / 127));
    CHECK(v2[3] == Approx(2.0f));
    // Per channel: channel 3's scale fits 8 (its 4 kept within half a step), the others 1:
    // channel 1's -2 is clamped to -1.
    std::vector<float> ks(layers * kv_dim, 1.0f / 127);
    ks[kv_dim + 3] = 8.0f / 127;
    channel.set_scales({ks, {}});
    const std::vector<float> kc{1.0f, -2.0f, 0.5f, 4.0f};
    channel.store_rows(1, 3, 1, {const_cast<float*>(kc.data()), 4}, {v.data(), 4});
    channel.load_rows(1, 3, 1, {k2.data(), 4}, {v2.data(), 4});
    CHECK(k2[3] == Approx(4.0f).margin(4.0f / 127));
    CHECK(k2[1] == Approx(-1.0f));
    CHECK(k2[0] == Approx(1.0f));
    CHECK(v2[3] == Approx(2.0f));  // V: its row's own scale
}
