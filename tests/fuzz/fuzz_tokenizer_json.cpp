// Fuzz target: a Hugging Face tokenizer.json's text -> ByteBpeTokenizer::from_hf_json_text (the
// JSON depth bound, every id through core/util/checked.h against the file's own entry count, the
// pre-tokenizer, added tokens, merges, the post-processor's BOS). Whatever parses encodes text
// (fixed strings and the input's own bytes) to ids inside its vocabulary, and decoding those ids
// gives the text's bytes back (byte-level BPE loses nothing) unless a special token is among them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const ByteBpeTokenizer t = ByteBpeTokenizer::from_hf_json_text(text, "fuzz.json");
        const int V = t.vocab_size();
        FUZZ_CHECK(V >= 256);  // a token for every byte, or it was refused
        const std::string_view own = text.substr(0, 256);
        for (std::string_view s :
             {std::string_view("hello world 123"), std::string_view(""),
              std::string_view("\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80"), own}) {
            const auto ids = t.encode(s);
            std::string back;
            bool special = false;  // a special token (BOS, or one a merge reached) is no text
            for (std::size_t i = 0; i < ids.size(); ++i) {
                FUZZ_CHECK(ids[i] >= 0 && ids[i] < V);
                const std::string piece = t.decode(i ? ids[i - 1] : -1, ids[i]);
                special |= piece.empty();
                back += piece;
            }
            FUZZ_CHECK(special || back == s);
        }
        for (int id : {-1, 0, V - 1, V, 1 << 30}) {
            t.piece(id);
            t.decode(-1, id);
        }
    } catch (const Error&) {
    }
    return 0;
}
