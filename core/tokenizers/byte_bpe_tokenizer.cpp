#include "core/tokenizers/byte_bpe_tokenizer.h"

#include "core/files/gguf_file.h"
#include "core/tokenizers/llama_vocab_rules.h"
#include "core/tokenizers/tokenizer.h"
#include "core/util/error.h"

namespace kvs {
namespace {

std::string utf8_of(char32_t c) {  // c < 0x800 here: one or two bytes
    if (c < 0x80) return std::string(1, static_cast<char>(c));
    return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
}

std::uint64_t pair_key(int l, int r) {
    return std::uint64_t(static_cast<std::uint32_t>(l)) << 32 | static_cast<std::uint32_t>(r);
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() {
    static const std::array<std::string, 256> table = [] {
        // Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other
        // 68 (controls, space, DEL, NBSP, soft hyphen) take U+0100, U+0101, ... in byte order.
        std::array<std::string, 256> t;
        char32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            t[b] = utf8_of(printable ? char32_t(b) : next++);
        }
        return t;
    }();
    return table;
}

ByteBpeTokenizer::ByteBpeTokenizer(std::vector<std::string> tokens,
                                   const std::vector<std::string>& merges, Options o,
                                   const std::string& source)
    : tokens_(std::move(tokens)),
      control_(std::move(o.control)),
      split_(o.split),
      ignore_merges_(o.ignore_merges),
      bos_(o.bos),
      eos_(o.eos),
      add_bos_(o.add_bos && o.bos >= 0) {
    auto fail = [&](const std::string& why) -> void {
        throw Error(source + ": byte-level BPE: " + why);
    };
    if (tokens_.size() > std::size_t(kMaxVocabulary))
        fail(std::to_string(tokens_.size()) + " tokens, more than kvscope reads (" +
             std::to_string(kMaxVocabulary) + ")");
    const int n = vocab_size();
    if (n == 0) fail("the vocabulary is empty");
    if (!control_.empty() && control_.size() != tokens_.size())
        fail("token types for " + std::to_string(control_.size()) + " of " + std::to_string(n) +
             " tokens");
    control_.resize(tokens_.size(), false);
    for (int id : {bos_, eos_})
        if (id >= n)
            fail("special token id " + std::to_string(id) + " is not below " + std::to_string(n));
    for (int i = n - 1; i >= 0; --i) index_[tokens_[i]] = i;

    // What each id decodes to: its characters mapped back to bytes. A special token, or one
    // holding characters outside the byte-level alphabet (an added token such as "<|im_start|>"
    // may), decodes to its own text.
    std::unordered_map<std::string, unsigned char> byte_of;
    const auto& chars = byte_level_chars();
    for (int b = 0; b < 256; ++b) byte_of[chars[b]] = static_cast<unsigned char>(b);
    bytes_.resize(n);
    for (int i = 0; i < n; ++i) {
        const std::string& t = tokens_[i];
        std::string out;
        bool byte_level = true;
        for (std::size_t k = 0; k < t.size() && byte_level;) {
            const std::size_t len = (static_cast<unsigned char>(t[k]) & 0xE0) == 0xC0 ? 2 : 1;
            const auto it = byte_of.find(t.substr(k, len));
            if (it == byte_of.end())
                byte_level = false;
            else
                out += static_cast<char>(it->second);
            k += len;
        }
        bytes_[i] = byte_level ? std::move(out) : t;
    }
    for (int b = 0; b < 256; ++b) {
        const auto it = index_.find(chars[b]);
        if (it == index_.end())
            fail("no token for byte 0x" + std::string(1, "0123456789abcdef"[b >> 4]) +
                 "0123456789abcdef"[b & 15] + " ('" + chars[b] + "')");
        byte_ids_[b] = it->second;
    }

    merges_.reserve(merges.size());
    for (std::size_t r = 0; r < merges.size(); ++r) {
        const std::string& m = merges[r];
        const auto sp = m.find(' ');
        if (sp == std::string::npos || sp == 0 || sp + 1 >= m.size() ||
            m.find(' ', sp + 1) != std::string::npos)
            fail("merge " + std::to_string(r) + " '" + m + "' is not two tokens");
        const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
        const auto l = index_.find(left), rt = index_.find(right), res = index_.find(left + right);
        if (l == index_.end() || rt == index_.end() || res == index_.end())
            fail("merge " + std::to_string(r) + " '" + m + "' names a token not in the vocabulary");
        // The first (lowest-ranked) occurrence of a pair wins, as in GPT-2's rank table.
        merges_.emplace(pair_key(l->second, rt->second), Merge{res->second, static_cast<int>(r)});
    }
    merge_count_ = merges.size();
}

std::string ByteBpeTokenizer::kind() const {
    std::string s = "byte-level BPE (";
    s += std::string(byte_bpe_split_name(split_)) + " pre-tokenizer";
    if (ignore_merges_) s += ", whole-piece tokens first";
    s += ", " + std::to_string(vocab_size()) + " tokens, " + std::to_string(merge_count_) +
         " merges, ";
    s += add_bos_ ? "BOS " + std::to_string(bos_) : std::string("no BOS");
    if (eos_ >= 0) s += ", EOS " + std::to_string(eos_);
    return s + ")";
}

std::vector<int> ByteBpeTokenizer::encode(std::string_view text) const {
    std::vector<int> out;
    if (add_bos_) out.push_back(bos_);
    std::vector<int> ids;
    const MergePair pair = [this](int l, int r) {
        const auto it = merges_.find(pair_key(l, r));
        // Float holds every rank below 2^24 exactly: the rule stays "lowest rank first".
        return it == merges_.end()
                   ? MergeResult{}
                   : MergeResult{it->second.id, -static_cast<float>(it->second.rank)};
    };
    const auto& chars = byte_level_chars();
    std::string stored;
    for (std::string_view piece : split_for_byte_bpe(text, split_)) {
        if (ignore_merges_) {  // the piece itself, when the vocabulary has it
            stored.clear();
            for (char c : piece) stored += chars[static_cast<unsigned char>(c)];
            if (const auto it = index_.find(stored); it != index_.end()) {
                out.push_back(it->second);
                continue;
            }
        }
        ids.clear();
        for (char c : piece) ids.push_back(byte_ids_[static_cast<unsigned char>(c)]);
        merge_by_score(ids, 0, pair);
        out.insert(out.end(), ids.begin(), ids.end());
    }
    return out;
}

std::string ByteBpeTokenizer::piece(int token) const {
    if (token < 0 || token >= vocab_size()) return "<bad id " + std::to_string(token) + ">";
    return bytes_[token];
}

std::string ByteBpeTokenizer::decode(int /*prev*/, int token) const {
    if (token < 0 || token >= vocab_size()) return piece(token);
    return control_[token] ? std::string() : bytes_[token];
}

ByteBpeTokenizer ByteBpeTokenizer::from_gguf(const GgufFile& f, int vocab) {
    auto fail = [&](const std::string& why) -> void {
        throw Error(f.name() + ": GGUF tokenizer: " + why);
    };
    const auto model = f.get_string("tokenizer.ggml.model");
    if (!model || *model != "gpt2") fail("tokenizer.ggml.model is not 'gpt2' (byte-level BPE)");
    Options o;
    const auto pre = f.get_string("tokenizer.ggml.pre");
    if (!pre || *pre == "gpt2" || *pre == "default")
        o.split = ByteBpeSplit::Gpt2;
    else if (*pre == "smollm")
        o.split = ByteBpeSplit::SmolLm;
    else if (*pre == "llama-bpe" || *pre == "llama3" || *pre == "llama-v3")
        o.split = ByteBpeSplit::Llama3, o.ignore_merges = true;  // as llama.cpp reads them
    else if (*pre == "qwen2")
        o.split = ByteBpeSplit::Qwen2;
    else
        fail("tokenizer.ggml.pre '" + std::string(*pre).substr(0, 40) +
             "' is not supported (kvscope splits text as 'gpt2', 'smollm', 'llama-bpe' and "
             "'qwen2' do)");
    const auto tokens = f.get_strings("tokenizer.ggml.tokens");
    if (static_cast<long long>(tokens.size()) != vocab)
        fail("tokenizer.ggml.tokens holds " + std::to_string(tokens.size()) +
             " tokens, the model's embedding has " + std::to_string(vocab) + " rows");
    const auto merges = f.get_strings("tokenizer.ggml.merges");
    if (merges.empty()) fail("no tokenizer.ggml.merges");
    const auto types = f.get_ints("tokenizer.ggml.token_type");
    if (!types.empty() && types.size() != tokens.size())
        fail("tokenizer.ggml.token_type holds " + std::to_string(types.size()) + " types for " +
             std::to_string(tokens.size()) + " tokens");
    for (std::int64_t t : types) o.control.push_back(t == 3);  // CONTROL, as SentencePiece's
    auto id = [&](const char* key) {
        const auto v = f.get_uint(key);
        if (!v) return -1;
        if (*v >= static_cast<std::uint64_t>(vocab))
            fail(std::string(key) + " = " + std::to_string(*v) + " is not a token id (vocab " +
                 std::to_string(vocab) + ")");
        return static_cast<int>(*v);
    };
    o.bos = id("tokenizer.ggml.bos_token_id");
    o.eos = id("tokenizer.ggml.eos_token_id");
    // GPT-2 adds no BOS; a model that does (Llama-3) says so in its metadata.
    o.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(false);
    return ByteBpeTokenizer(std::vector<std::string>(tokens.begin(), tokens.end()),
                            std::vector<std::string>(merges.begin(), merges.end()), std::move(o),
                            f.name());
}

}  // namespace kvs
