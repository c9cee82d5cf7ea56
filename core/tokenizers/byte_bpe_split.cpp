#include "core/tokenizers/byte_bpe_split.h"

#include "core/tokenizers/unicode_class.h"

namespace kvs {
namespace {

enum class Cls { Letter, Number, Space, Other };

Cls class_of(char32_t c) {
    if (is_unicode_letter(c)) return Cls::Letter;
    if (is_unicode_number(c)) return Cls::Number;
    if (is_unicode_space(c)) return Cls::Space;
    return Cls::Other;
}

// GPT-2's regex at position i of s: the length of the match (always >= 1 for i < s.size(),
// since every code point is a letter, number, space or other).
std::size_t gpt2_match(std::string_view s, std::size_t i) {
    const std::size_t n = s.size();
    // 's|'t|'re|'ve|'m|'ll|'d (case-sensitive; none is a prefix of another)
    if (s[i] == '\'') {
        for (std::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"})
            if (s.substr(i, c.size()) == c) return c.size();
    }
    // Where a run of class `k` ends, starting at j.
    auto run_end = [&](std::size_t j, Cls k) {
        while (j < n) {
            const CodePoint cp = next_code_point(s, j);
            if (class_of(cp.c) != k) break;
            j += cp.bytes;
        }
        return j;
    };
    //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+   (the optional prefix is a plain space only)
    if (s[i] == ' ' && i + 1 < n) {  // with the space first
        const Cls k = class_of(next_code_point(s, i + 1).c);
        if (k != Cls::Space) return run_end(i + 1, k) - i;
    }
    if (const Cls k = class_of(next_code_point(s, i).c); k != Cls::Space)  // then without it
        return run_end(i, k) - i;
    // \s+(?!\S) : the whitespace run, less its last code point when non-space follows; \s+ :
    // when that leaves nothing (a single space before non-space), the one code point.
    const std::size_t end = run_end(i, Cls::Space);
    if (end == n) return end - i;
    std::size_t last = i;  // start of the run's last code point
    for (std::size_t p = i; p < end; p += next_code_point(s, p).bytes) last = p;
    return last > i ? last - i : end - i;
}

// Llama 3's regex at position i of s (Qwen2's with max_digits 1); >= 1 for i < s.size().
std::size_t llama3_match(std::string_view s, std::size_t i, int max_digits) {
    const std::size_t n = s.size();
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    // (?i:'s|'t|'re|'ve|'m|'ll|'d): ASCII letters in either case
    if (s[i] == '\'') {
        for (std::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
            bool same = i + c.size() <= n;
            for (std::size_t k = 1; same && k < c.size(); ++k) same = lower(s[i + k]) == c[k];
            if (same) return c.size();
        }
    }
    auto run_end = [&](std::size_t j, Cls k) {  // where a run of class k from j ends
        while (j < n) {
            const CodePoint cp = next_code_point(s, j);
            if (class_of(cp.c) != k) break;
            j += cp.bytes;
        }
        return j;
    };
    auto newline = [&](std::size_t j) { return j < n && (s[j] == '\r' || s[j] == '\n'); };
    const CodePoint first = next_code_point(s, i);
    const Cls k = class_of(first.c);
    // [^\r\n\p{L}\p{N}]?\p{L}+ : letters, after at most one code point that is none of those
    if (k == Cls::Letter) return run_end(i, Cls::Letter) - i;
    if (k != Cls::Number && !newline(i) && i + first.bytes < n &&
        class_of(next_code_point(s, i + first.bytes).c) == Cls::Letter)
        return run_end(i + first.bytes, Cls::Letter) - i;
    // \p{N}{1,max_digits}
    if (k == Cls::Number) {
        std::size_t j = i;
        for (int d = 0; d < max_digits && j < n; ++d) {
            const CodePoint cp = next_code_point(s, j);
            if (class_of(cp.c) != Cls::Number) break;
            j += cp.bytes;
        }
        return j - i;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]* : a plain space at most, others, then any newlines
    const std::size_t from = s[i] == ' ' && i + 1 < n ? i + 1 : i;
    if (class_of(next_code_point(s, from).c) == Cls::Other) {
        std::size_t j = run_end(from, Cls::Other);
        while (newline(j)) ++j;
        return j - i;
    }
    // Whitespace from here on (k is Space).
    const std::size_t end = run_end(i, Cls::Space);
    // \s*[\r\n]+ : the run up to its last newline, when it holds one
    std::size_t after_newline = i;
    for (std::size_t p = i; p < end; p += next_code_point(s, p).bytes)
        if (newline(p)) after_newline = p + 1;
    if (after_newline > i) return after_newline - i;
    // \s+(?!\S) and \s+, as GPT-2's rule has them
    if (end == n) return end - i;
    std::size_t last = i;
    for (std::size_t p = i; p < end; p += next_code_point(s, p).bytes) last = p;
    return last > i ? last - i : end - i;
}

void split_gpt2(std::string_view s, std::vector<std::string_view>& out) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = gpt2_match(s, i);
        out.push_back(s.substr(i, len));
        i += len;
    }
}

}  // namespace

const char* const kLlama3SplitRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2SplitRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const char* byte_bpe_split_name(ByteBpeSplit rule) {
    switch (rule) {
        case ByteBpeSplit::Gpt2:
            return "GPT-2";
        case ByteBpeSplit::SmolLm:
            return "SmolLM";
        case ByteBpeSplit::Llama3:
            return "Llama 3";
        case ByteBpeSplit::Qwen2:
            return "Qwen2";
    }
    return "?";
}

std::vector<std::string_view> split_for_byte_bpe(std::string_view text, ByteBpeSplit rule) {
    std::vector<std::string_view> out;
    if (rule == ByteBpeSplit::Llama3 || rule == ByteBpeSplit::Qwen2) {
        const int digits = rule == ByteBpeSplit::Llama3 ? 3 : 1;
        for (std::size_t i = 0; i < text.size();) {
            const std::size_t len = llama3_match(text, i, digits);
            out.push_back(text.substr(i, len));
            i += len;
        }
        return out;
    }
    if (rule == ByteBpeSplit::Gpt2) {
        split_gpt2(text, out);
        return out;
    }
    // SmolLM: each number code point is a piece; GPT-2's rule on the text between them.
    std::size_t from = 0;
    for (std::size_t i = 0; i < text.size();) {
        const CodePoint cp = next_code_point(text, i);
        if (is_unicode_number(cp.c)) {
            split_gpt2(text.substr(from, i - from), out);
            out.push_back(text.substr(i, cp.bytes));
            from = i + cp.bytes;
        }
        i += cp.bytes;
    }
    split_gpt2(text.substr(from), out);
    return out;
}

}  // namespace kvs
