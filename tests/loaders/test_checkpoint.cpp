// The llama2.c checkpoint reader: shapes, the classifier convention, and every way a file can lie.
#include <catch2/catch.hpp>
#include <cstring>

#include "core/loaders/checkpoint.h"
#include "core/util/error.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {
void set_header(std::vector<unsigned char>& b, int field, std::int32_t v) {
    std::memcpy(b.data() + 4 * field, &v, 4);
}
std::string error_of(const std::vector<unsigned char>& b) {
    try {
        parse_checkpoint(b.data(), b.size(), "m.bin");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("a valid checkpoint loads with the shapes of its header", "[checkpoint]") {
    const ModelConfig c = test::tiny_config();
    const auto b = test::synthetic_checkpoint(c, 7);
    const Checkpoint ck = parse_checkpoint(b.data(), b.size(), "m.bin");
    CHECK(ck.config.dim == 16);
    CHECK(ck.config.kv_dim() == 8);
    CHECK(ck.config.shared_classifier);
    CHECK(ck.weights.wcls == ck.weights.token_embedding);
    // The first weight is the first float after the 28-byte header.
    float first;
    std::memcpy(&first, b.data() + 28, 4);
    CHECK(ck.weights.token_embedding[0] == first);
    // norm_final is the last tensor before freq_cis.
    const std::size_t freq = 2 * std::size_t(c.seq_len) * (c.head_dim() / 2);
    float last_rms;
    std::memcpy(&last_rms, b.data() + b.size() - 4 * (freq + 1), 4);
    CHECK(ck.weights.norm_final[c.dim - 1] == last_rms);
}

TEST_CASE("a negative vocab size means a separate classifier at the end", "[checkpoint]") {
    ModelConfig c = test::tiny_config();
    c.shared_classifier = false;
    const auto b = test::synthetic_checkpoint(c, 3);
    const Checkpoint ck = parse_checkpoint(b.data(), b.size(), "m.bin");
    CHECK_FALSE(ck.config.shared_classifier);
    CHECK(ck.config.vocab_size == 300);
    CHECK(ck.weights.wcls != ck.weights.token_embedding);
    float last;
    std::memcpy(&last, b.data() + b.size() - 4, 4);
    CHECK(ck.weights.wcls[std::size_t(c.vocab_size) * c.dim - 1] == last);
}

TEST_CASE("bad checkpoints are refused with a one-line message naming the file", "[checkpoint]") {
    const auto good = test::synthetic_checkpoint(test::tiny_config());
    SECTION("truncated") {
        auto b = good;
        b.resize(b.size() - 100);
        const auto e = error_of(b);
        CHECK(e.find("m.bin") == 0);
        CHECK(e.find("truncated") != std::string::npos);
    }
    SECTION("trailing data") {
        auto b = good;
        b.push_back(0);
        CHECK(error_of(b).find("trailing") != std::string::npos);
    }
    SECTION("shorter than the header") {
        std::vector<unsigned char> b(good.begin(), good.begin() + 10);
        CHECK(error_of(b).find("header") != std::string::npos);
    }
    SECTION("a header that lies about the layers") {
        auto b = good;
        set_header(b, 2, 3);
        CHECK(error_of(b).find("implies") != std::string::npos);
    }
    SECTION("heads that do not divide dim") {
        auto b = good;
        set_header(b, 3, 5);
        CHECK(error_of(b).find("does not divide dim") != std::string::npos);
    }
    SECTION("kv heads that do not divide heads") {
        auto b = good;
        set_header(b, 4, 3);
        CHECK(error_of(b).find("does not divide n_heads") != std::string::npos);
    }
    SECTION("zero and negative dimensions") {
        for (int field : {0, 1, 2, 3, 4, 6}) {
            auto b = good;
            set_header(b, field, field == 6 ? 0 : -4);
            CHECK(error_of(b).find("must be") != std::string::npos);
        }
    }
    SECTION("absurd dimensions do not overflow") {
        auto b = good;
        set_header(b, 0, 0x7fffffff);
        CHECK(!error_of(b).empty());
        set_header(b, 0, 16);
        set_header(b, 5, INT32_MIN);
        CHECK(!error_of(b).empty());
    }
    SECTION("a newer llama2.c export") {
        auto b = good;
        set_header(b, 0, 0x616b3432);
        CHECK(error_of(b).find("version 1") != std::string::npos);
    }
    SECTION("text is not a model") {
        const std::string t = "This is just a text file, not a model at all.\n";
        CHECK(!error_of(std::vector<unsigned char>(t.begin(), t.end())).empty());
    }
}

TEST_CASE("a missing file is an error naming it", "[checkpoint]") {
    try {
        load_checkpoint("/nonexistent/model.bin");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("/nonexistent/model.bin: cannot open") == 0);
    }
}
