#include "core/tokenizers/toy_tokenizer.h"

#include <cctype>

#include "core/tokenizers/toy_vocabulary.h"
#include "core/util/error.h"

namespace kvs {
namespace {

bool same_word(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() > tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

ToyTokenizer::ToyTokenizer() {
    for (const ToyWord& w : toy_vocabulary()) words_.emplace_back(w.text);
}

int ToyTokenizer::id(std::string_view word) const {
    for (std::size_t i = 0; i < words_.size(); ++i)
        if (same_word(word, words_[i])) return static_cast<int>(i);
    return -1;
}

std::string ToyTokenizer::vocabulary_list() const {
    std::string s;
    for (const auto& w : words_) s += (s.empty() ? "" : ", ") + w;
    return s;
}

std::vector<int> ToyTokenizer::encode(std::string_view text) const {
    std::vector<int> ids;
    std::size_t i = 0;
    while (i < text.size()) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        std::string_view word = text.substr(i, j - i);
        i = j;
        int dots = 0;  // "warm." is "warm" then "."
        while (word.size() > 1 && word.back() == '.') {
            word.remove_suffix(1);
            ++dots;
        }
        int t = id(word);
        // "Today's" / "Today’s" (U+2019) is "Today".
        for (std::string_view poss : {std::string_view("'s"), std::string_view("\xE2\x80\x99s")})
            if (t < 0 && ends_with(word, poss)) t = id(word.substr(0, word.size() - poss.size()));
        if (t < 0)
            throw Error("'" + std::string(word) + "' is not in the toy vocabulary (" +
                        vocabulary_list() + ")");
        ids.push_back(t);
        for (int d = 0; d < dots; ++d) ids.push_back(id("."));
    }
    return ids;
}

std::string ToyTokenizer::decode(int prev, int token) const {
    const std::string p = piece(token);
    return prev < 0 || p == "." ? p : " " + p;
}

std::string ToyTokenizer::piece(int token) const {
    if (token < 0 || token >= vocab_size()) {
        std::string s("<");  // built in steps: GCC 12 warns falsely on "<" + std::string
        s += std::to_string(token);
        return s += "?>";
    }
    return words_[token];
}

}  // namespace kvs
