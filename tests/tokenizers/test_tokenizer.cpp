// run.c's tokenizer rules on a synthetic vocabulary: dummy prefix, code points, byte fallback,
// score-ordered merges, and decoding after BOS.
#include <catch2/catch.hpp>

#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {
// A vocabulary in which " the" is reachable by merges: " "+"t", "h"+"e", then " t"+"he".
BpeTokenizer make() {
    const auto b = test::synthetic_tokenizer(
        {" ", "t", "h", "e", "c", "a", " t", "he", " the", "\xC3\xA9", " c", "at"}, 280);
    return BpeTokenizer::parse(b.data(), b.size(), 280, "tok.bin");
}
std::string error_of(const std::vector<unsigned char>& b, int vocab) {
    try {
        BpeTokenizer::parse(b.data(), b.size(), vocab, "t.bin");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("encode: BOS, dummy prefix and merges by score", "[tokenizer]") {
    const BpeTokenizer t = make();
    CHECK(t.encode("") == std::vector<int>{1});
    // " the" is reached through " t" + "he": merges need every intermediate piece.
    CHECK(t.encode("the") == std::vector<int>{1, t.find(" the")});
    CHECK(t.encode("the cat") == std::vector<int>{1, t.find(" the"), t.find(" c"), t.find("at")});
    // Byte fallback for characters not in the vocabulary: 'x' = 0x78 -> id 0x78 + 3.
    CHECK(t.encode("x") == std::vector<int>{1, t.find(" "), 0x78 + 3});
}

TEST_CASE("encode: the highest-scoring pair merges first, leftmost on ties", "[tokenizer]") {
    // scores: a 0, b -1, c -2, bc -3, ab -4, " " -5: in "abc", "bc" beats "ab", and "abc" is
    // not a piece, so the result is a + bc.
    const auto b = test::synthetic_tokenizer({"a", "b", "c", "bc", "ab", " "}, 270);
    const BpeTokenizer u = BpeTokenizer::parse(b.data(), b.size(), 270, "t");
    CHECK(u.encode("abc") == std::vector<int>{1, u.find(" "), u.find("a"), u.find("bc")});
    // "aaa": both pairs are "aa" with the same score; the leftmost merges.
    const auto b2 = test::synthetic_tokenizer({"a", "aa", " "}, 270);
    const BpeTokenizer v = BpeTokenizer::parse(b2.data(), b2.size(), 270, "t");
    CHECK(v.encode("aaa") == std::vector<int>{1, v.find(" "), v.find("aa"), v.find("a")});
}

TEST_CASE("encode: multi-byte code points are one piece or their bytes", "[tokenizer]") {
    const BpeTokenizer t = make();
    const int sp = t.find(" ");
    CHECK(t.encode("\xC3\xA9") == std::vector<int>{1, sp, t.find("\xC3\xA9")});
    // U+1F600 is not in the vocabulary: four byte tokens.
    CHECK(t.encode("\xF0\x9F\x98\x80") ==
          std::vector<int>{1, sp, 0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3});
}

TEST_CASE("decode: leading space dropped after BOS, raw bytes restored", "[tokenizer]") {
    const BpeTokenizer t = make();
    CHECK(t.decode(1, t.find(" the")) == "the");
    CHECK(t.decode(t.find("e"), t.find(" the")) == " the");
    CHECK(t.decode(5, 0x41 + 3) == "A");
    CHECK(t.decode(5, 0xF0 + 3) == "\xF0");
    // run.c prints no lone unprintable byte.
    CHECK(t.printable(5, 0xF0 + 3).empty());
    CHECK(t.printable(5, 0x0A + 3) == "\n");
}

TEST_CASE("encode then decode returns the text for arbitrary UTF-8", "[tokenizer]") {
    const BpeTokenizer t = make();
    for (std::string s : {"the cat", "h\xC3\xA9llo the", "\xE4\xBD\xA0\xE5\xA5\xBD", "a\tb\nc",
                          "\xF0\x9F\x98\x80 emoji"}) {
        const auto ids = t.encode(s);
        std::string back;
        for (std::size_t i = 1; i < ids.size(); ++i) back += t.decode(ids[i - 1], ids[i]);
        CHECK(back == s);
    }
}

TEST_CASE("a file that is not a tokenizer is refused", "[tokenizer]") {
    const auto good = test::synthetic_tokenizer({" "}, 270);
    CHECK(error_of(good, 270).empty());
    CHECK(error_of(good, 512).find("holds 270 tokens, the model needs 512") != std::string::npos);
    auto cut = good;
    cut.resize(cut.size() - 3);
    CHECK(error_of(cut, 270).find("t.bin: not a llama2.c tokenizer") == 0);
    const auto model = test::synthetic_checkpoint(test::tiny_config());
    CHECK(!error_of(model, 300).empty());
    CHECK(!error_of({1, 2}, 300).empty());
}
