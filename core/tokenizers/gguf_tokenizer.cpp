#include "core/tokenizers/gguf_tokenizer.h"

#include "core/files/gguf_file.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/tokenizers/spm_tokenizer.h"
#include "core/util/error.h"

namespace kvs {

GgufTokenizer tokenizer_from_gguf(const GgufFile& f, int vocab) {
    GgufTokenizer g;
    const auto model = f.get_string("tokenizer.ggml.model");
    int eos = -1, bos = -1;
    if (model && *model != "gpt2" && *model != "llama")
        throw Error(f.name() + ": GGUF tokenizer: tokenizer.ggml.model '" + std::string(*model) +
                    "' is not supported (kvscope reads 'llama', SentencePiece-style, and 'gpt2', "
                    "byte-level BPE)");
    if (model && *model == "gpt2") {
        auto t = std::make_unique<ByteBpeTokenizer>(ByteBpeTokenizer::from_gguf(f, vocab));
        eos = t->eos();
        bos = t->bos_id();
        g.tok = std::move(t);
    } else {  // "llama", or none: SpmTokenizer says what is missing
        auto t = std::make_unique<SpmTokenizer>(SpmTokenizer::from_gguf(f, vocab));
        eos = t->eos();
        bos = t->bos_id();
        g.tok = std::move(t);
    }
    for (int id : {eos, bos})
        if (id >= 0 && (g.stop.empty() || g.stop[0] != id)) g.stop.push_back(id);
    return g;
}

}  // namespace kvs
