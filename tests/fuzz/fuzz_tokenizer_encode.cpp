// Fuzz target: arbitrary bytes as a prompt, through a fixed valid tokenizer (byte pieces, merges,
// Chinese and emoji pieces). Every id stays in the vocabulary, BOS comes first, and decoding the
// ids gives the bytes back (NUL bytes excepted: run.c prints nothing for <0x00>); printable()
// gives either the decoded bytes or nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/tokenizers/bpe_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs;

namespace {
const BpeTokenizer& tokenizer() {
    static const BpeTokenizer t = [] {
        const auto b = fuzz::tokenizer_bytes(320, {" ",
                                                   "e",
                                                   " t",
                                                   "he",
                                                   " the",
                                                   "a",
                                                   " a",
                                                   "in",
                                                   "\xe4\xbd\xa0",
                                                   "\xe5\xa5\xbd",
                                                   "\xe4\xbd\xa0\xe5\xa5\xbd",
                                                   "\xf0\x9f\x98\x80",
                                                   " \xf0\x9f\x98\x80",
                                                   "\xc3\xa9",
                                                   "\n",
                                                   " \n",
                                                   "<",
                                                   "<0",
                                                   "0x",
                                                   "\t"});
        return BpeTokenizer::parse(b.data(), b.size(), 320, "fixed.tok");
    }();
    return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const BpeTokenizer& t = tokenizer();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto ids = t.encode(text);
    FUZZ_CHECK(!ids.empty() && ids[0] == BpeTokenizer::kBos);
    std::string back;
    for (std::size_t i = 1; i < ids.size(); ++i) {
        FUZZ_CHECK(ids[i] >= BpeTokenizer::kByteBase && ids[i] < t.vocab_size());
        const std::string d = t.decode(ids[i - 1], ids[i]);
        const std::string p = t.printable(ids[i - 1], ids[i]);
        FUZZ_CHECK(p.empty() || p == d);
        back += d;
    }
    std::string expect;
    for (char ch : text)
        if (ch != '\0') expect += ch;
    FUZZ_CHECK(back == expect);
    // The ids a decoder may be handed by mistake.
    for (std::size_t i = 0; i + 1 < size && i < 16; i += 2) {
        const int id = (data[i] << 8 | data[i + 1]) - 64;
        t.decode(BpeTokenizer::kBos, id);
        t.printable(id, id);
    }
    return 0;
}
