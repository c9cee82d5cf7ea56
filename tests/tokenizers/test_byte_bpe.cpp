// Byte-level BPE: GPT-2's byte alphabet, the pre-tokenizer's split, rank-ordered
// merges, exact decoding, the three ways to load it (vocab.json + merges.txt, tokenizer.json, GGUF
// metadata) and their refusals; and the memory check before loading: a model whose weights and KV
// cache at the chosen context do not fit is refused with the numbers, before any weight is read.
// (Token-for-token agreement with GPT-2's real vocabulary is tests/peer/peer_gpt2_tokenizer.cpp.)
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "core/files/gguf_file.h"
#include "core/loaders/gguf_llama.h"
#include "core/loaders/memory_budget.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/byte_bpe_split.h"
#include "core/tokenizers/byte_bpe_tokenizer.h"
#include "core/tokenizers/unicode_class.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(std::string_view s, ByteBpeSplit rule = ByteBpeSplit::Gpt2) {
    std::vector<std::string> out;
    for (auto p : split_for_byte_bpe(s, rule)) out.emplace_back(p);
    return out;
}

// A vocabulary of the 256 byte characters then `extra` tokens, in that id order.
std::vector<std::string> byte_vocab(const std::vector<std::string>& extra) {
    std::vector<std::string> t(byte_level_chars().begin(), byte_level_chars().end());
    t.insert(t.end(), extra.begin(), extra.end());
    return t;
}

int id_of(const ByteBpeTokenizer& t, const std::string& stored) {
    for (int i = 0; i < t.vocab_size(); ++i)
        if (t.stored(i) == stored) return i;
    return -1;
}

std::string decode_all(const Tokenizer& t, const std::vector<int>& ids) {
    std::string s;
    int prev = -1;
    for (int id : ids) s += t.decode(prev, id), prev = id;
    return s;
}

// GGUF v3 bytes, written field by field (core/files/gguf_file.h's layout): enough for the tests'
// files.
struct GgufBytes {
    std::string kv, infos, data;
    std::uint64_t n_kv = 0, n_tensors = 0;

    template <class T>
    static void put(std::string& b, T v) {
        char raw[sizeof v];
        std::memcpy(raw, &v, sizeof v);
        b.append(raw, sizeof v);
    }
    static void str(std::string& b, std::string_view s) {
        put<std::uint64_t>(b, s.size());
        b.append(s);
    }
    void key(std::string_view k, GgufValueType t) {
        str(kv, k);
        put(kv, static_cast<std::uint32_t>(t));
        ++n_kv;
    }
    void u32(std::string_view k, std::uint32_t v) { key(k, GgufValueType::U32), put(kv, v); }
    void string(std::string_view k, std::string_view v) {
        key(k, GgufValueType::STRING), str(kv, v);
    }
    void strings(std::string_view k, const std::vector<std::string>& v) {
        key(k, GgufValueType::ARRAY);
        put(kv, static_cast<std::uint32_t>(GgufValueType::STRING));
        put<std::uint64_t>(kv, v.size());
        for (const auto& s : v) str(kv, s);
    }
    // A tensor's info; its data (when given) goes at the next 32-byte boundary of the data
    // section. Without data only the offset advances: the file is then extended (sparse) to hold
    // it.
    std::uint64_t end = 0;
    void tensor(std::string_view name, std::vector<std::uint64_t> dims, GgmlType type,
                const float* f32 = nullptr) {
        std::uint64_t n = 1;
        for (auto d : dims) n *= d;
        const std::uint64_t bytes = n / ggml_block_elements(type) * ggml_block_bytes(type);
        str(infos, name);
        put(infos, static_cast<std::uint32_t>(dims.size()));
        for (auto d : dims) put(infos, d);
        put(infos, static_cast<std::uint32_t>(type));
        put(infos, end);
        if (f32) {
            data.resize(end);
            data.append(reinterpret_cast<const char*>(f32), bytes);
        }
        end = (end + bytes + 31) / 32 * 32;
        ++n_tensors;
    }
    void write(const fs::path& p) const {
        std::string b = "GGUF";
        put(b, std::uint32_t(3));
        put(b, n_tensors);
        put(b, n_kv);
        b += kv + infos;
        b.resize((b.size() + 31) / 32 * 32);
        std::ofstream f(p, std::ios::binary);
        f.write(b.data(), static_cast<std::streamsize>(b.size()));
        f.write(data.data(), static_cast<std::streamsize>(data.size()));
        f.close();
        fs::resize_file(p, b.size() + end);  // the rest is a hole: no disk, no data
    }
};

void llama_shapes(GgufBytes& g, const ModelConfig& c) {
    g.string("general.architecture", "llama");
    g.u32("llama.context_length", c.seq_len);
    g.u32("llama.embedding_length", c.dim);
    g.u32("llama.block_count", c.n_layers);
    g.u32("llama.feed_forward_length", c.hidden_dim);
    g.u32("llama.attention.head_count", c.n_heads);
    g.u32("llama.attention.head_count_kv", c.n_kv_heads);
}

// A llama model's tensors in GGUF's order and shapes (core/loaders/gguf_llama.cpp), F32 from `w`
// or, with w == nullptr, `type` and no data.
void llama_tensors(GgufBytes& g, const ModelConfig& c, const LlamaWeights* w, GgmlType type) {
    const std::uint64_t d = c.dim, hd = c.hidden_dim, kv = c.kv_dim(), V = c.vocab_size;
    auto m = [&](const std::string& n, std::uint64_t in, std::uint64_t out, const float* p) {
        g.tensor(n, {in, out}, w ? GgmlType::F32 : type, w ? p : nullptr);
    };
    auto v = [&](const std::string& n, const float* p) {
        g.tensor(n, {d}, GgmlType::F32, w ? p : nullptr);
    };
    const LlamaWeights none;
    const LlamaWeights& x = w ? *w : none;
    auto at = [&](const float* base, std::size_t off) { return base ? base + off : nullptr; };
    m("token_embd.weight", d, V, x.token_embedding);
    for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        v(b + "attn_norm.weight", at(x.norm_att, l * d));
        m(b + "attn_q.weight", d, d, at(x.wq, l * d * d));
        m(b + "attn_k.weight", d, kv, at(x.wk, l * kv * d));
        m(b + "attn_v.weight", d, kv, at(x.wv, l * kv * d));
        m(b + "attn_output.weight", d, d, at(x.wo, l * d * d));
        v(b + "ffn_norm.weight", at(x.norm_ffn, l * d));
        m(b + "ffn_gate.weight", d, hd, at(x.w1, l * hd * d));
        m(b + "ffn_down.weight", hd, d, at(x.w2, l * d * hd));
        m(b + "ffn_up.weight", d, hd, at(x.w3, l * hd * d));
    }
    v("output_norm.weight", x.norm_final);
    if (!c.shared_classifier) m("output.weight", d, V, x.wcls);
}

// A byte-level vocabulary of `n` tokens (n <= 256 + 52 * 52): the 256 bytes, then merges of
// letter pairs ("a a" -> "aa", "a b" -> "ab", ...) in that rank order.
void gpt2_tokenizer(GgufBytes& g, int n, std::vector<std::string>* merges_out = nullptr) {
    const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::vector<std::string> extra, merges;
    for (std::size_t i = 0; 256 + int(extra.size()) < n; ++i) {
        const char a = letters[i / letters.size()], b = letters[i % letters.size()];
        extra.push_back(std::string{a, b});
        merges.push_back(std::string{a, ' ', b});
    }
    g.string("tokenizer.ggml.model", "gpt2");
    g.string("tokenizer.ggml.pre", "gpt2");
    g.strings("tokenizer.ggml.tokens", byte_vocab(extra));
    g.strings("tokenizer.ggml.merges", merges);
    if (merges_out) *merges_out = merges;
}

}  // namespace

TEST_CASE("byte-level alphabet: GPT-2's bytes_to_unicode", "[byte_bpe]") {
    const auto& c = byte_level_chars();
    CHECK(c[' '] == "\xC4\xA0");   // U+0120 'Ġ'
    CHECK(c['\n'] == "\xC4\x8A");  // U+010A 'Ċ'
    CHECK(c['A'] == "A");
    CHECK(c[0xE9] == "\xC3\xA9");  // printable Latin-1 stands for itself: U+00E9
    CHECK(c[0xAD] == "\xC5\x83");  // soft hyphen, the 68th non-printable byte: U+0143
    std::set<std::string> distinct(c.begin(), c.end());
    CHECK(distinct.size() == 256);
}

TEST_CASE("Unicode classes from unicode-data: letters, numbers, White_Space", "[byte_bpe]") {
    for (char32_t ch :
         {U'A', U'z', U'\u00E9', U'\u4E2D', U'\u0436', U'\u0627', U'\uAC00', U'\u3042'})
        CHECK(is_unicode_letter(ch));
    for (char32_t ch : {U'1', U' ', U'!', U'\U0001F355', U'\u0301', U'_'})
        CHECK_FALSE(is_unicode_letter(ch));
    for (char32_t ch : {U'7', U'\u0663', U'\u2160', U'\u00BD', U'\u00B2'})
        CHECK(is_unicode_number(ch));
    CHECK_FALSE(is_unicode_number(U'a'));
    for (char32_t ch : {U'\t', U'\n', U'\r', U' ', U'\u0085', U'\u00A0', U'\u3000', U'\u2029'})
        CHECK(is_unicode_space(ch));
    for (char32_t ch : {U'\u200B', U'\uFEFF', U'a'}) CHECK_FALSE(is_unicode_space(ch));
    CHECK(next_code_point("\xE4\xB8\xAD", 0).c == U'\u4E2D');
    CHECK(next_code_point("\xE4\xB8\xAD", 0).bytes == 3);
    CHECK(next_code_point("\xE4\xB8", 0).bytes == 1);  // cut short: one byte at a time
}

TEST_CASE("the Unicode classes hold every code point the data files give them, and no other",
          "[byte_bpe]") {
    // Read here straight from the files the tables were generated from (no merging, no
    // padding): a code point is a letter exactly when DerivedGeneralCategory.txt says L*, a
    // number when N*, a space when PropList.txt says White_Space. (A generator that misreads
    // numbers with inner zeros turns U+2776..2793 into 112..10131, and U+2764 '❤' into a number.)
    const std::string dir = KVSCOPE_UNICODE_DIR;
    std::vector<char> letter(0x110000), number(0x110000), space(0x110000);
    auto read = [&](const std::string& file, auto&& mark) {
        std::ifstream in(dir + "/" + file);
        REQUIRE(in);
        int lines = 0;
        for (std::string line; std::getline(in, line);) {
            if (line.empty() || line[0] == '#') continue;
            const auto semi = line.find(';');
            const std::string range = line.substr(0, line.find_first_of(" ;"));
            const auto dots = range.find("..");
            const unsigned long a = std::stoul(range.substr(0, dots), nullptr, 16);
            const unsigned long b =
                dots == std::string::npos ? a : std::stoul(range.substr(dots + 2), nullptr, 16);
            std::string prop = line.substr(semi + 1);
            prop = prop.substr(prop.find_first_not_of(' '));
            prop = prop.substr(0, prop.find_first_of(" #"));
            for (unsigned long c = a; c <= b; ++c) mark(c, prop);
            ++lines;
        }
        return lines;
    };
    CHECK(read("extracted/DerivedGeneralCategory.txt", [&](unsigned long c, const std::string& p) {
              letter[c] = p[0] == 'L' && p != "LC";
              number[c] = p[0] == 'N';
          }) > 3000);
    CHECK(read("PropList.txt", [&](unsigned long c, const std::string& p) {
              if (p == "White_Space") space[c] = 1;
          }) > 1000);
    int wrong = 0;
    for (char32_t c = 0; c < 0x110000; ++c)
        if (is_unicode_letter(c) != bool(letter[c]) || is_unicode_number(c) != bool(number[c]) ||
            is_unicode_space(c) != bool(space[c]))
            if (++wrong <= 5) FAIL_CHECK("U+" << std::hex << std::uint32_t(c) << " misclassified");
    CHECK(wrong == 0);
    CHECK_FALSE(is_unicode_number(U'\u2764'));  // ❤, a symbol
    CHECK(is_unicode_number(U'\u2776'));        // ❶
    CHECK(is_unicode_letter(U'\u1000'));        // Myanmar KA (4096 once read as 496)
}

TEST_CASE("the GPT-2 pre-tokenizer splits as its regex does", "[byte_bpe]") {
    using V = std::vector<std::string>;
    CHECK(split("Hello world") == V{"Hello", " world"});
    CHECK(split("I'm here, it's") == V{"I", "'m", " here", ",", " it", "'s"});
    CHECK(split("IT'S") == V{"IT", "'", "S"});  // the contractions are lower case only
    CHECK(split("a  b") == V{"a", " ", " b"});  // \s+(?!\S) leaves the last space to the word
    CHECK(split("a\n\nb") == V{"a", "\n", "\n", "b"});
    CHECK(split("x   ") == V{"x", "   "});  // trailing whitespace is one piece
    CHECK(split("\t\tx") == V{"\t", "\t", "x"});
    CHECK(split(" 123abc 4.5") == V{" 123", "abc", " 4", ".", "5"});
    CHECK(split("f(x) += 1;") == V{"f", "(", "x", ")", " +=", " 1", ";"});
    CHECK(split("你好，世界") == V{"你好", "，", "世界"});
    CHECK(split("I love 🍕!") == V{"I", " love", " 🍕!"});
    CHECK(split("") == V{});
    CHECK(split(" 123", ByteBpeSplit::SmolLm) == V{" ", "1", "2", "3"});
    CHECK(split("ab12c", ByteBpeSplit::SmolLm) == V{"ab", "1", "2", "c"});
    // Malformed UTF-8: each stray byte is a symbol of its own, and nothing is lost.
    const std::string bad = "a\xFF\xC3 b\x80";
    for (auto rule : {ByteBpeSplit::Gpt2, ByteBpeSplit::Llama3, ByteBpeSplit::Qwen2}) {
        std::string joined;
        for (const auto& p : split(bad, rule)) joined += p;
        CHECK(joined == bad);
    }
}

TEST_CASE("the Llama 3 and Qwen2 pre-tokenizers split as their regexes do", "[byte_bpe]") {
    using V = std::vector<std::string>;
    const auto L3 = ByteBpeSplit::Llama3, Q2 = ByteBpeSplit::Qwen2;
    CHECK(split("Hello world", L3) == V{"Hello", " world"});
    CHECK(split("IT'S I'm", L3) == V{"IT", "'S", " I", "'m"});      // contractions in either case
    CHECK(split("12345 apples", L3) == V{"123", "45", " apples"});  // \p{N}{1,3}
    CHECK(split("12345", Q2) == V{"1", "2", "3", "4", "5"});        // \p{N}
    CHECK(split("a\n\nb", L3) == V{"a", "\n\n", "b"});              // \s*[\r\n]+
    CHECK(split("x  \n  y", L3) == V{"x", "  \n", " ", " y"});
    CHECK(split("(hello)", L3) == V{"(hello", ")"});  // one non-letter before the letters
    CHECK(split("f(x) += 1;", L3) == V{"f", "(x", ")", " +=", " ", "1", ";"});
    CHECK(split("end.\r\n", L3) == V{"end", ".\r\n"});  // others, then their newlines
    CHECK(split("你好，世界", Q2) == V{"你好", "，世界"});
    CHECK(split("x   ", L3) == V{"x", "   "});
    CHECK(split("", L3) == V{});
    CHECK(std::string(byte_bpe_split_name(L3)) == "Llama 3");
}

TEST_CASE("Llama 3's ignore_merges: a piece that is a token is that token", "[byte_bpe]") {
    // "abc" is a token no merge reaches ("a b" makes "ab", nothing makes "abc").
    ByteBpeTokenizer::Options o;
    o.split = ByteBpeSplit::Llama3;
    const ByteBpeTokenizer merged(byte_vocab({"ab", "abc"}), {"a b"}, o, "merged");
    CHECK(merged.encode("abc ab") == std::vector<int>{256, 'c', ' ', 256});
    o.ignore_merges = true;
    const ByteBpeTokenizer whole(byte_vocab({"ab", "abc"}), {"a b"}, o, "whole");
    CHECK(whole.encode("abc ab") == std::vector<int>{257, ' ', 256});
    CHECK(whole.kind().find("Llama 3 pre-tokenizer, whole-piece tokens first") !=
          std::string::npos);
}

TEST_CASE("merges apply in rank order, and decoding gives back every byte", "[byte_bpe]") {
    // "abc": ranks a+b first, then ab+c.
    ByteBpeTokenizer t1(byte_vocab({"ab", "bc", "abc"}), {"a b", "b c", "ab c"}, {}, "t1");
    CHECK(t1.encode("abc") == std::vector<int>{id_of(t1, "abc")});
    // b+c first: then "a" + "bc" has no merge, and stays two tokens.
    ByteBpeTokenizer t2(byte_vocab({"ab", "bc", "abc"}), {"b c", "a b", "ab c"}, {}, "t2");
    CHECK(t2.encode("abc") == std::vector<int>{'a', id_of(t2, "bc")});  // byte b's id is b
    // Leftmost first among equal ranks: "aaa" -> "aa" + "a".
    ByteBpeTokenizer t3(byte_vocab({"aa"}), {"a a"}, {}, "t3");
    CHECK(t3.encode("aaa") == std::vector<int>{id_of(t3, "aa"), id_of(t3, "a")});
    // A space merges as 'Ġ'.
    ByteBpeTokenizer t4(byte_vocab({"\xC4\xA0h"}), {"\xC4\xA0 h"}, {}, "t4");
    CHECK(t4.encode("a h") == std::vector<int>{id_of(t4, "a"), id_of(t4, "\xC4\xA0h")});
    CHECK(t4.piece(id_of(t4, "\xC4\xA0h")) == " h");
    // Every byte value, valid UTF-8 or not, comes back exactly.
    std::string all;
    for (int b = 255; b >= 0; --b) all += static_cast<char>(b);
    all += "ab a b\n\tabc";
    CHECK(decode_all(t1, t1.encode(all)) == all);
    CHECK(t1.bos() == -1);
    CHECK(t1.kind().rfind("byte-level BPE (GPT-2 pre-tokenizer, 259 tokens, 3 merges", 0) == 0);
}

TEST_CASE("byte-level BPE files: vocab.json + merges.txt, tokenizer.json, and their refusals",
          "[byte_bpe]") {
    const auto dir = test::temp_dir("byte-bpe");
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name, std::ios::binary) << text;
        return (dir / name).string();
    };
    // vocab.json: the bytes, "ab", "Ġab"; merges: "a b", "Ġ ab".
    std::string vocab = "{";
    const auto toks = byte_vocab({"ab",
                                  "\xC4\xA0"
                                  "ab"});
    for (std::size_t i = 0; i < toks.size(); ++i) {
        std::string esc;
        for (char ch : toks[i])
            esc += ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : std::string(1, ch);
        if (i) vocab += ',';
        vocab.append("\"").append(esc).append("\":").append(std::to_string(i));
    }
    vocab += "}";
    const auto vj = write("vocab.json", vocab);
    const auto mt = write("merges.txt", "#version: 0.2\na b\n\xC4\xA0 ab\n");
    const auto t = ByteBpeTokenizer::from_vocab_and_merges(vj, mt);
    CHECK(t.merge_count() == 2);
    CHECK(t.encode("ab ab") == std::vector<int>{256, 257});
    CHECK(decode_all(t, t.encode("ab ab")) == "ab ab");

    const std::string model = "\"model\":{\"type\":\"BPE\",\"vocab\":" + vocab +
                              ",\"merges\":[[\"a\",\"b\"],\"\xC4\xA0 ab\"]}";
    const auto hj =
        write("tokenizer.json",
              "{" + model +
                  ",\"added_tokens\":[{\"id\":258,\"content\":\"<|end|>\",\"special\":true}],"
                  "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false}}");
    const auto h = ByteBpeTokenizer::from_hf_json(hj);
    CHECK(h.vocab_size() == 259);
    CHECK(h.encode("ab ab") == std::vector<int>{256, 257});
    CHECK(h.decode(-1, 258).empty());  // a special token is not text
    // The post-processor's BOS is a special token even when its added_tokens entry does not say
    // so: it decodes to no text, so decoding the encoded text gives the text back after it.
    const auto bos = ByteBpeTokenizer::from_hf_json(write(
        "bos.json", "{" + model +
                        ",\"added_tokens\":[{\"id\":258,\"content\":\"<|end|>\"}],"
                        "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},"
                        "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":["
                        "{\"SpecialToken\":{\"id\":\"<|end|>\",\"type_id\":0}}]}}"));
    CHECK(bos.encode("ab ab") == std::vector<int>{258, 256, 257});
    CHECK(decode_all(bos, bos.encode("ab ab")) == "ab ab");

    auto refused = [&](auto&& load, const std::string& words) {
        try {
            load();
            FAIL("accepted; expected: " << words);
        } catch (const Error& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(words) != std::string::npos);
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    };
    refused([&] { ByteBpeTokenizer::from_vocab_and_merges(vj, write("m2.txt", "a q\n")); },
            "merge 0 'a q' names a token not in the vocabulary");
    refused([&] { ByteBpeTokenizer::from_vocab_and_merges(vj, write("m3.txt", "abc\n")); },
            "is not two tokens");
    refused(
        [&] { ByteBpeTokenizer::from_vocab_and_merges(write("v2.json", "{\"a\":0,\"b\":0}"), mt); },
        "ids must be 0..1, each once");
    refused([&] { ByteBpeTokenizer::from_vocab_and_merges(write("v3.json", "{\"a\":0,"), mt); },
            "v3.json: not valid JSON at byte 7 (line 1, column 8): unexpected end of input; "
            "expected string literal; near '{\"a\":0,'");
    refused([&] { ByteBpeTokenizer({"a", "b"}, {}, {}, "two"); }, "no token for byte 0x00");
    refused(
        [&] {
            ByteBpeTokenizer::from_hf_json(
                write("t2.json", "{" + model + ",\"pre_tokenizer\":{\"type\":\"Metaspace\"}}"));
        },
        "pre_tokenizer {\"type\":\"Metaspace\"} is not supported");
    refused([&] { ByteBpeTokenizer::from_hf_json(write("t3.json", "[1,2]")); },
            "no \"model\" object");
}

TEST_CASE("a GGUF llama file with a gpt2 tokenizer: byte-level BPE from its metadata",
          "[byte_bpe][gguf]") {
    const auto base = open_model("default");
    const auto& lm = dynamic_cast<const TransformerModel&>(*base);
    const ModelConfig c = lm.config();
    GgufBytes g;
    llama_shapes(g, c);
    std::vector<std::string> merges;
    gpt2_tokenizer(g, c.vocab_size, &merges);
    g.u32("tokenizer.ggml.eos_token_id", 0);
    llama_tensors(g, c, &lm.weights(), GgmlType::F32);
    const auto dir = test::temp_dir("byte-bpe-gguf");
    const auto path = (dir / "bytes.gguf").string();
    g.write(path);

    const auto m = open_model(path);
    const auto& t = dynamic_cast<const ByteBpeTokenizer&>(m->tokenizer());
    CHECK(t.vocab_size() == c.vocab_size);
    CHECK(t.merge_count() == merges.size());
    // "ab" -> "a b"; " cd" -> 'Ġ' (byte 32's id: the vocabulary starts in byte order) + "c d".
    CHECK(t.encode("ab cd") == std::vector<int>{id_of(t, "ab"), 32, id_of(t, "cd")});
    CHECK(t.encode("abc") == std::vector<int>{id_of(t, "ab"), 'c'});  // "ab c" is no merge
    CHECK(decode_all(t, t.encode("hello, wörld\n")) == "hello, wörld\n");
    CHECK(m->tokenizer().bos() == -1);  // GPT-2 adds no BOS unless the metadata says so

    auto r = test::run_cli({"info", "--model", path});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("tokenizer: byte-level BPE (GPT-2 pre-tokenizer, " +
                     std::to_string(c.vocab_size) + " tokens, " + std::to_string(merges.size()) +
                     " merges, no BOS, EOS 0)") != std::string::npos);
    r = test::run_cli(
        {"generate", "--model", path, "--prompt", "the cat", "--max-new-tokens", "5"});
    CHECK(r.exit_code == 0);

    // Another pre-tokenizer, or another tokenizer model, is refused by name.
    GgufBytes h;
    llama_shapes(h, c);
    h.string("tokenizer.ggml.model", "gpt2");
    h.string("tokenizer.ggml.pre", "tekken");
    llama_tensors(h, c, &lm.weights(), GgmlType::F32);
    h.write(dir / "pre.gguf");
    r = test::run_cli({"info", "--model", (dir / "pre.gguf").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("tokenizer.ggml.pre 'tekken' is not supported") != std::string::npos);
    GgufBytes k;
    llama_shapes(k, c);
    k.string("tokenizer.ggml.model", "bert");
    llama_tensors(k, c, &lm.weights(), GgmlType::F32);
    k.write(dir / "bert.gguf");
    r = test::run_cli({"info", "--model", (dir / "bert.gguf").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("tokenizer.ggml.model 'bert' is not supported (kvscope reads 'llama', "
                     "SentencePiece-style, and 'gpt2', byte-level BPE)") != std::string::npos);
}

TEST_CASE("memory: refused before loading with the numbers, the KV cache is for the chosen context",
          "[byte_bpe][memory]") {
    const auto dir = test::temp_dir("memory");
    // Llama-3-8B's shapes, Q4_0, with no data: the file is a 4.3 GiB hole (no disk used), and
    // float32 weights would need 29.9 GiB. Expanded (--weights f32), refusal comes from the
    // shapes, before a byte is read; as stored (the default) the Q4_0 weights fit.
    ModelConfig big;
    big.dim = 4096, big.hidden_dim = 14336, big.n_layers = 32, big.n_heads = 32;
    big.n_kv_heads = 8, big.vocab_size = 128256, big.seq_len = 8192, big.shared_classifier = false;
    GgufBytes g;
    llama_shapes(g, big);
    g.string("tokenizer.ggml.model", "gpt2");
    llama_tensors(g, big, nullptr, GgmlType::Q4_0);
    const auto path = (dir / "huge.gguf").string();
    g.write(path);
    CHECK(fs::file_size(path) > (std::uint64_t(4) << 30));

    const std::uint64_t weights = std::uint64_t(big.parameter_count()) * 4;
    auto kv_at = [&](std::uint64_t ctx) { return big.kv_bytes_per_token() * ctx; };
    ::setenv("KVSCOPE_MEM_AVAILABLE", std::to_string(std::uint64_t(16) << 30).c_str(), 1);
    auto r = test::run_cli({"info", "--model", path, "--backend", "cpu", "--weights", "f32"});
    CHECK(r.exit_code == 2);
    const std::string want =
        path + ": does not fit: needs " + format_bytes(double(weights + kv_at(8192))) +
        " for weights (" + format_bytes(double(weights)) + ") + KV cache at context 8192 (" +
        format_bytes(double(kv_at(8192))) + "), " + format_bytes(double(std::uint64_t(16) << 30)) +
        " available (KVSCOPE_MEM_AVAILABLE)";
    CHECK(r.err.find(want) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    INFO(r.err);
    CHECK(weights > (std::uint64_t(29) << 30));
    // A shorter context shrinks only the KV cache: the weights alone still do not fit.
    r = test::run_cli(
        {"info", "--model", path, "--backend", "cpu", "--context", "512", "--weights", "f32"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("KV cache at context 512 (" + format_bytes(double(kv_at(512))) + ")") !=
          std::string::npos);
    // As stored (the default): the Q4_0 matrices and table kept as they are fit, and the file
    // is refused only further on, for its empty vocabulary.
    r = test::run_cli({"info", "--model", path, "--backend", "cpu", "--context", "512"});
    INFO("as stored: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("does not fit") == std::string::npos);
    CHECK(r.err.find("tokenizer.ggml.tokens holds 0 tokens") != std::string::npos);

    // The default model (3.1 MiB of weights, 1 KiB of KV cache per token, context 256): a limit
    // of weights + 100 KiB refuses the whole context and takes --context 64.
    const auto def = open_model("default");
    const std::uint64_t w = fs::file_size(default_model_path()) - 28;  // the header is not weights
    ::setenv("KVSCOPE_MEM_AVAILABLE", std::to_string(w + 100 * 1024).c_str(), 1);
    r = test::run_cli({"info", "--model", "default", "--backend", "cpu"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("KV cache at context 256 (256 KiB)") != std::string::npos);
    r = test::run_cli({"info", "--model", "default", "--backend", "cpu", "--context", "64"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("64.0 KiB at the session's context of 64") != std::string::npos);
    ::setenv("KVSCOPE_MEM_AVAILABLE", "lots", 1);
    r = test::run_cli({"info", "--model", "default"});
    CHECK(r.err.find("KVSCOPE_MEM_AVAILABLE='lots' is not a positive number of bytes") !=
          std::string::npos);
    ::unsetenv("KVSCOPE_MEM_AVAILABLE");

    // In process: the context cut, and the KV cache sized by it (TransformerRunner allocates
    // KvCache(n_layers, config().seq_len, ...)).
    OpenLimits small;
    small.context = 40;
    CHECK(open_model("default", "", small)->config().seq_len == 40);
}
