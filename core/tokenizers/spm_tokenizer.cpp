#include "core/tokenizers/spm_tokenizer.h"

#include "core/files/gguf_file.h"
#include "core/tokenizers/llama_vocab_rules.h"
#include "core/util/checked.h"
#include "core/util/error.h"

namespace kvs {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581 '▁', SentencePiece's space

std::string spaces_from_underbars(std::string_view p) {
    std::string out;
    out.reserve(p.size());
    for (std::size_t i = 0; i < p.size();) {
        if (p.compare(i, kSpace.size(), kSpace) == 0) {
            out += ' ';
            i += kSpace.size();
        } else {
            out += p[i++];
        }
    }
    return out;
}

}  // namespace

SpmTokenizer SpmTokenizer::from_gguf(const GgufFile& f, int vocab) {
    const std::string where = f.name() + ": GGUF tokenizer: ";
    auto fail = [&](const std::string& why) -> void { throw Error(where + why); };
    const auto model = f.get_string("tokenizer.ggml.model");
    if (!model) fail("no tokenizer.ggml.model");
    if (*model != "llama")
        fail("tokenizer.ggml.model '" + std::string(*model) +
             "' is not supported (kvscope reads 'llama', SentencePiece-style)");
    const auto tokens = f.get_strings("tokenizer.ggml.tokens");
    if (static_cast<long long>(tokens.size()) != vocab)
        fail("tokenizer.ggml.tokens holds " + std::to_string(tokens.size()) +
             " pieces, the model's embedding has " + std::to_string(vocab) + " rows");
    SpmVocab v;
    v.tokens.assign(tokens.begin(), tokens.end());
    v.scores = f.get_floats("tokenizer.ggml.scores");
    if (v.scores.empty()) v.scores.assign(tokens.size(), 0.0f);
    if (v.scores.size() != tokens.size())
        fail("tokenizer.ggml.scores holds " + std::to_string(v.scores.size()) + " scores for " +
             std::to_string(tokens.size()) + " pieces");
    const auto types = f.get_ints("tokenizer.ggml.token_type");
    if (!types.empty() && types.size() != tokens.size())
        fail("tokenizer.ggml.token_type holds " + std::to_string(types.size()) + " types for " +
             std::to_string(tokens.size()) + " pieces");
    // Types 1..6 (SentencePiece's NORMAL..BYTE); any other value refused as the file has it.
    v.types.reserve(types.size());
    for (std::size_t i = 0; i < types.size(); ++i)
        v.types.push_back(
            types[i] >= 1 && types[i] <= 6
                ? int(types[i])
                : int(checked_int(types[i], 1, 6,
                                  {f.name() + ": GGUF tokenizer",
                                   "tokenizer.ggml.token_type[" + std::to_string(i) + "]"},
                                  "a token type")));
    auto id = [&](const char* key, int fallback) {
        const auto x = f.get_uint(key);
        if (!x) return fallback;
        if (*x >= static_cast<std::uint64_t>(vocab))
            fail(std::string(key) + " = " + std::to_string(*x) + " is not a token id (vocab " +
                 std::to_string(vocab) + ")");
        return static_cast<int>(*x);
    };
    v.bos = id("tokenizer.ggml.bos_token_id", -1);
    v.eos = id("tokenizer.ggml.eos_token_id", -1);
    v.unk = id("tokenizer.ggml.unknown_token_id", 0);
    v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(true);
    v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
    v.source = "GGUF metadata";
    return from_vocab(std::move(v), where);
}

SpmTokenizer SpmTokenizer::from_vocab(SpmVocab v, const std::string& where) {
    auto fail = [&](const std::string& why) -> void { throw Error(where + why); };
    const std::size_t n = v.tokens.size();
    if (n == 0) fail("no pieces");
    if (v.scores.size() != n || (!v.types.empty() && v.types.size() != n))
        fail(std::to_string(v.scores.size()) + " scores and " + std::to_string(v.types.size()) +
             " types for " + std::to_string(n) + " pieces");
    for (int id : {v.bos, v.eos, v.unk})
        if (id < -1 || id >= static_cast<long long>(n))
            fail("special token id " + std::to_string(id) + " is not a token id (vocab " +
                 std::to_string(n) + ")");
    SpmTokenizer t;
    t.byte_ids_.fill(-1);
    t.pieces_.reserve(n);
    t.types_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        PieceType ty = PieceType::Normal;
        if (!v.types.empty()) {
            if (v.types[i] < 1 || v.types[i] > 6)
                fail("token " + std::to_string(i) + " has type " + std::to_string(v.types[i]) +
                     " (1..6)");
            ty = static_cast<PieceType>(v.types[i]);
        } else if (byte_of_piece(v.tokens[i]) >= 0 && v.tokens[i].size() == 6) {
            ty = PieceType::Byte;
        }
        std::string p = ty == PieceType::Byte || ty == PieceType::Control
                            ? v.tokens[i]
                            : spaces_from_underbars(v.tokens[i]);
        if (ty == PieceType::Byte) {
            const int b = byte_of_piece(p);
            if (b < 0 || p.size() != 6)
                fail("token " + std::to_string(i) + " is a BYTE piece but not \"<0xNN>\"");
            if (t.byte_ids_[b] < 0) t.byte_ids_[b] = static_cast<int>(i);
        }
        t.pieces_.push_back(std::move(p));
        t.types_.push_back(ty);
    }
    t.scores_ = std::move(v.scores);
    for (int i = t.vocab_size() - 1; i >= 0; --i)
        if (t.types_[i] != PieceType::Byte && t.types_[i] != PieceType::Control)
            t.index_[t.pieces_[i]] = i;
    t.bos_ = v.bos;
    t.eos_ = v.eos;
    t.unk_ = v.unk < 0 ? 0 : v.unk;
    t.add_bos_ = v.add_bos && t.bos_ >= 0;
    t.add_space_prefix_ = v.add_space_prefix;
    t.source_ = std::move(v.source);
    return t;
}

std::string SpmTokenizer::kind() const {
    return "SentencePiece-style from " + source_ + " (" + std::to_string(vocab_size()) +
           " pieces, byte fallback, BOS " + std::to_string(bos_) + ", EOS " + std::to_string(eos_) +
           ")";
}

int SpmTokenizer::find(const std::string& text) const {
    auto it = index_.find(text);
    return it == index_.end() ? -1 : it->second;
}

std::vector<int> SpmTokenizer::encode(std::string_view text) const {
    std::vector<int> ids;
    if (add_bos_) ids.push_back(bos_);
    const int first = static_cast<int>(ids.size());
    // SentencePiece's dummy prefix: the first word gets a leading space like all others.
    std::string s = add_space_prefix_ && !text.empty() ? " " : "";
    s += text;
    // One piece per UTF-8 code point (a lead byte and at most 3 continuation bytes), else bytes.
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = 1;
        while (i + n < s.size() && n < 4 && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80)
            ++n;
        const int id = find(s.substr(i, n));
        if (id >= 0) {
            ids.push_back(id);
        } else {
            for (std::size_t k = 0; k < n; ++k) {
                const int b = byte_ids_[static_cast<unsigned char>(s[i + k])];
                ids.push_back(b >= 0 ? b : unk_);
            }
        }
        i += n;
    }
    merge_by_score(ids, first, [this](int l, int r) {
        if (types_[l] == PieceType::Byte || types_[r] == PieceType::Byte) return MergeResult{};
        const int m = find(pieces_[l] + pieces_[r]);
        return m >= 0 ? MergeResult{m, scores_[m]} : MergeResult{};
    });
    return ids;
}

std::string SpmTokenizer::piece(int token) const {
    if (token < 0 || token >= vocab_size()) return "<bad id " + std::to_string(token) + ">";
    return pieces_[token];
}

std::string SpmTokenizer::decode(int prev, int token) const {
    if (token < 0 || token >= vocab_size()) return piece(token);
    switch (types_[token]) {
        case PieceType::Control:
            return {};
        case PieceType::Byte: {
            const int b = byte_of_piece(pieces_[token]);
            return b <= 0 ? std::string() : std::string(1, static_cast<char>(b));
        }
        default:
            break;
    }
    std::string p = pieces_[token];
    if (add_space_prefix_ && prev == bos_ && !p.empty() && p[0] == ' ') p.erase(0, 1);
    return p;
}

std::string SpmTokenizer::printable(int prev, int token) const {
    return printable_piece(decode(prev, token));
}

}  // namespace kvs
