// Fuzz target: a Hugging Face tokenizer.json's text -> ByteBpeTokenizer::from_hf_json_text (the
// JSON depth bound, every id through core/util/checked.h against the file's own entry count, the
// pre-tokenizer, added tokens, merges, the post-processor's BOS). Whatever parses encodes text
// (fixed strings and the input's own bytes) to ids inside its vocabulary: the BOS first when the
// post-processor adds one, decoding to no text (it is a special token, whatever its added_tokens
// entry says), then ids whose decoding gives the text's bytes back (byte-level BPE loses nothing)
// unless a merge reached a special token (an added token may take a vocabulary entry's id).
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
            std::size_t first = 0;
            if (t.bos() >= 0) {
                FUZZ_CHECK(!ids.empty() && ids[0] == t.bos());
                FUZZ_CHECK(t.decode(-1, ids[0]).empty());
                first = 1;
            }
            std::string back;
            bool special = false;  // a special token a merge reached is no text
            for (std::size_t i = first; i < ids.size(); ++i) {
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
