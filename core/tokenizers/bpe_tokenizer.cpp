#include "core/tokenizers/bpe_tokenizer.h"

#include <cstdint>
#include <cstring>

#include "core/tokenizers/llama_vocab_rules.h"
#include "core/tokenizers/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::size_t kMaxTokenizerBytes = std::size_t(256) << 20;
constexpr int kMaxPieceBytes = 4096;
constexpr int kMaxVocab = kMaxVocabulary;  // core/tokenizers/tokenizer.h

}  // namespace

BpeTokenizer BpeTokenizer::parse(const unsigned char* data, std::size_t size, int expected_vocab,
                                 const std::string& name) {
    auto fail = [&](const std::string& why) -> void {
        throw Error(name + ": not a llama2.c tokenizer: " + why);
    };
    std::size_t at = 0;
    auto read_i32 = [&](std::int32_t& v) {
        if (size - at < 4) return false;
        std::memcpy(&v, data + at, 4);
        at += 4;
        return true;
    };
    BpeTokenizer t;
    std::int32_t max_len = 0;
    if (!read_i32(max_len)) refuse_too_short(name, size, "a llama2.c tokenizer's header", 4);
    if (max_len <= 0 || max_len > kMaxPieceBytes)
        fail("max_token_length = " + std::to_string(max_len));
    t.max_token_length_ = max_len;

    // One entry at `at`: its score and piece, or false (with `why`) when the bytes there are not
    // one. Entries past the model's vocabulary are only counted, never stored, so a huge file of
    // tiny entries cannot make us allocate gigabytes.
    std::string why;
    auto entry = [&](float& score, std::string_view& piece) {
        const std::size_t id = t.pieces_.size();
        std::int32_t len;
        if (size - at < 8) {
            why = "token " + std::to_string(id) + " is truncated";
            return false;
        }
        std::memcpy(&score, data + at, 4);
        std::memcpy(&len, data + at + 4, 4);
        if (len < 0 || len > max_len) {
            why = "token " + std::to_string(id) + " has length " + std::to_string(len) +
                  " (max_token_length " + std::to_string(max_len) + ")";
            return false;
        }
        if (static_cast<std::size_t>(len) > size - at - 8) {
            why = "token " + std::to_string(id) + " runs past the end of the file";
            return false;
        }
        piece = std::string_view(reinterpret_cast<const char*>(data + at + 8), len);
        at += 8 + static_cast<std::size_t>(len);
        return true;
    };
    const int most = expected_vocab >= 0 ? expected_vocab : kMaxVocab;
    while (at < size && t.vocab_size() < most) {
        float score;
        std::string_view piece;
        if (!entry(score, piece)) fail(why);
        t.pieces_.emplace_back(piece);
        t.scores_.push_back(score);
    }
    if (expected_vocab >= 0 && t.vocab_size() < expected_vocab)
        fail("holds " + std::to_string(t.vocab_size()) + " tokens, the model needs " +
             std::to_string(expected_vocab));
    if (at != size) {
        if (expected_vocab < 0) fail("more than " + std::to_string(kMaxVocab) + " tokens");
        const std::size_t rest_at = at;
        std::size_t extra = 0;
        float score;
        std::string_view piece;
        while (at < size && entry(score, piece)) ++extra;
        if (at == size)  // a whole tokenizer, for a bigger vocabulary
            fail("holds " + std::to_string(expected_vocab + extra) + " tokens, the model needs " +
                 std::to_string(expected_vocab));
        fail(std::to_string(size - rest_at) + " bytes of trailing data after the model's " +
             std::to_string(expected_vocab) + " tokens");
    }
    if (t.vocab_size() < kByteBase) fail("fewer than 3 tokens (<unk>, <s>, </s>)");
    for (int i = t.vocab_size() - 1; i >= 0; --i) t.index_[t.pieces_[i]] = i;
    return t;
}

BpeTokenizer BpeTokenizer::load(const std::string& path, int expected_vocab) {
    const auto bytes = read_file_bytes(path, kMaxTokenizerBytes);
    return parse(bytes.data(), bytes.size(), expected_vocab, path);
}

int BpeTokenizer::find(std::string_view piece) const {
    auto it = index_.find(std::string(piece));
    return it == index_.end() ? -1 : it->second;
}

std::vector<int> BpeTokenizer::encode(std::string_view text) const {
    std::vector<int> ids{kBos};
    if (!text.empty()) {
        // sentencepiece's dummy prefix: the first word gets a leading space like all others.
        const int space = find(" ");
        if (space >= 0) ids.push_back(space);
    }
    // One piece per UTF-8 code point (a lead byte and at most 3 continuation bytes), else bytes.
    for (std::size_t i = 0; i < text.size();) {
        std::size_t n = 1;
        while (i + n < text.size() && n < 4 &&
               (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80)
            ++n;
        const int id = find(text.substr(i, n));
        if (id >= 0) {
            ids.push_back(id);
        } else {
            for (std::size_t k = 0; k < n; ++k) {
                const int b = static_cast<unsigned char>(text[i + k]) + kByteBase;
                ids.push_back(b < vocab_size() ? b : 0);
            }
        }
        i += n;
    }

    // run.c's merge rule (core/tokenizers/llama_vocab_rules.h); BOS at index 0 never merges.
    merge_by_score(ids, 1, [this](int l, int r) {
        const int m = find(pieces_[l] + pieces_[r]);
        return m >= 0 && scores_[m] > -1e10f ? MergeResult{m, scores_[m]} : MergeResult{};
    });
    return ids;
}

std::string BpeTokenizer::piece(int token) const {
    if (token < 0 || token >= vocab_size()) return "<bad id " + std::to_string(token) + ">";
    return pieces_[token];
}

std::string BpeTokenizer::decode(int prev, int token) const {
    std::string p = piece(token);
    if (prev == kBos && !p.empty() && p[0] == ' ') p.erase(0, 1);
    const int b = byte_of_piece(p);
    if (b >= 0) return b == 0 ? std::string() : std::string(1, static_cast<char>(b));
    // A piece is a C string in run.c: nothing after an embedded NUL is printed.
    const auto nul = p.find('\0');
    return nul == std::string::npos ? p : p.substr(0, nul);
}

std::string BpeTokenizer::printable(int prev, int token) const {
    return printable_piece(decode(prev, token));
}

}  // namespace kvs
