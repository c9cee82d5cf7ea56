// Fuzz target: tokenizer.bin bytes -> BpeTokenizer::parse. A tokenizer that parses must parse
// again at exactly its own size and be refused at any other; it then encodes and decodes text
// (fixed strings and the input's own bytes) without leaving its vocabulary.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/tokenizers/bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs;

namespace {
bool refused(const std::uint8_t* data, std::size_t size, int vocab) {
    try {
        BpeTokenizer::parse(data, size, vocab, "fuzz.tok");
    } catch (const Error&) {
        return true;
    }
    return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    BpeTokenizer t;
    try {
        t = BpeTokenizer::parse(data, size, -1, "fuzz.tok");
    } catch (const Error&) {
        return 0;
    }
    const int V = t.vocab_size();
    FUZZ_CHECK(V >= 3);
    FUZZ_CHECK(!refused(data, size, V));
    FUZZ_CHECK(refused(data, size, V - 1));
    FUZZ_CHECK(refused(data, size, V + 1));

    const std::string_view own(reinterpret_cast<const char*>(data),
                               std::min<std::size_t>(size, 256));
    for (std::string_view text :
         {std::string_view("hello world"), std::string_view(""),
          std::string_view("\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80"), own}) {
        const auto ids = t.encode(text);
        FUZZ_CHECK(!ids.empty() && ids[0] == BpeTokenizer::kBos);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            FUZZ_CHECK(ids[i] >= 0 && ids[i] < V);
            const int prev = i ? ids[i - 1] : -1;
            t.decode(prev, ids[i]);
            t.printable(prev, ids[i]);
        }
    }
    for (int id : {-1, 0, V - 1, V, 1 << 30}) {
        t.piece(id);
        t.decode(BpeTokenizer::kBos, id);
        t.printable(3, id);
    }
    return 0;
}
