#pragma once
// The texts the tokenizer peer tests encode on both sides (peer_gpt2_tokenizer.cpp against
// GPT-2's own encoder, peer_llama_tokenizer.cpp against llama.cpp's): written cases where
// pre-tokenizer rules and merges meet, and random ones from the same kinds of pieces.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/splitmix64.h"

namespace kvs::test {

// What GPT-2's pre-tokenizer and merges meet in real text. (No U+0085 or U+FEFF: JavaScript's
// \s and Unicode's White_Space disagree on those two, see core/tokenizers/unicode_class.h.)
inline const std::vector<std::string> kCorpus = {
    "Hello world, this is GPT-2's tokenizer!",
    "Once upon a time, there was a little girl named Lily. She loved to play outside.",
    // contractions, lower and upper case (GPT-2's rule is case-sensitive), and lookalikes
    "I'm sure you're right: we've seen they'll go, he'd say it's done, don't they?",
    "I'M SURE YOU'RE RIGHT, IT'S DONE. rock'n'roll 'quoted' ''s 'd'll 've're",
    "O'Neil's cat's toy; the '90s; l'homme; 'tis",
    // code
    "int main(int argc, char** argv) {\n\tprintf(\"%d\\n\", argc);\n\treturn 0;\n}\n",
    "def f(x):\n    return [i ** 2 for i in range(x) if i % 3 == 0]  # squares\n",
    "const s = `${a}+${b}`; if (x !== null && y >= 10) { z -= 1; } // done",
    "<div class=\"row\"><a href=\"https://example.com/a?b=1&c=2#top\">link</a></div>",
    // numbers
    "3.14159 2718281828 1,000,000 0x7fff -42 +7 1e-5 12:30 2026-11-24 $19.99 100%",
    "Call 555-0123 or 1-800-FLOWERS; room 101b; v2.0.1; ½ ¾ ² ³ Ⅻ ٣٤٥ ४२",
    // whitespace runs: spaces, tabs, newlines, at the start, in the middle, at the end
    "   leading spaces",
    "trailing spaces   ",
    "a  b   c    d\t\te\n\nf\r\ng \t \n h",
    "\n\n\nthree newlines first",
    "tab\tseparated\tvalues\t\t\n",
    " ",
    "\t",
    "\u00a0no-break\u00a0space and\u3000ideographic space\u2003em space",
    // letters of several scripts
    "Καλημέρα κόσμε, Ελληνικά γράμματα",
    "Привет, мир! Съешь же ещё этих мягких французских булок.",
    "مرحبا بالعالم، هذا نص عربي",
    "שלום עולם, זה טקסט בעברית",
    "नमस्ते दुनिया, यह हिंदी है",
    "สวัสดีชาวโลก ภาษาไทย",
    "Grüße aus Köln: Straße, Ærø, Øresund, Åland, naïve café, façade, jalapeño",
    "e\u0301 combining acute, a\u0308 combining diaeresis",
    // CJK
    "你好，世界！我们今天学习注意力机制和键值缓存。",
    "日本語のテキスト：ひらがな、カタカナ、漢字。",
    "한국어 텍스트입니다. 안녕하세요!",
    // emoji (single, modifiers, ZWJ sequences, flags) and symbols
    "I love 🍕 and 🐈‍⬛! 👍🏽 👨‍👩‍👧‍👦 🇯🇵🇫🇷 ❤️ ✨",
    "∑ ∫ √ ∞ ≈ ≠ ≤ ≥ → ⇒ © ® ™ € £ ¥ • … — –",
    // mixed
    "Mixed: abc123def 123abc ab12cd34 x1 y22 z333 __init__ snake_case CamelCase",
    "!!!??? ... --- *** ### @@@ ;;; ::: ,,, ''' \"\"\"",
    "",
};

// Random texts from pieces where the split rules meet (letters, digits, marks, spaces, tabs,
// newlines, apostrophes before contraction letters, punctuation, CJK, emoji), 1 to 24 pieces
// each, from splitmix64 seed 18: the same texts on every run.
inline constexpr int kRandomTexts = 2000;

inline std::vector<std::string> random_texts(int n) {
    static const char* pool[] = {
        "a",      "Z",      "é",       "ß",  "ж",        "λ",   "ا",   "中", "の",  "한",
        "1",      "42",     "٣",       "½",  "²",        " ",   "  ",  "\t", "\n",  "\r\n",
        "\u00a0", "\u3000", "'",       "'s", "'t",       "'re", "'ve", "'m", "'ll", "'d",
        "'S",     ",",      ".",       "!",  "?",        "-",   "_",   "(",  ")",   "\"",
        "$",      "%",      "e\u0301", "🍕",  "👍🏽", "🇯🇵",  "—",   "…",  "the", " the",
        "ing",    "http",   "://",     "0x", "\\",       "/*",  "*/"};
    const std::size_t m = sizeof pool / sizeof pool[0];
    std::uint64_t state = 18;
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
        std::string t;
        const int pieces = 1 + static_cast<int>(kvs::splitmix64_next(state) % 24);
        for (int k = 0; k < pieces; ++k) t += pool[kvs::splitmix64_next(state) % m];
        out.push_back(t);
    }
    return out;
}

}  // namespace kvs::test
