#include "core/tokenizers/spm_model_file.h"

#include "core/util/error.h"
#include "core/util/file_bytes.h"

#if KVSCOPE_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>

#include <cstdint>
#include <string_view>
#endif

namespace kvs {

#if !KVSCOPE_HAVE_SENTENCEPIECE

bool reads_sentencepiece_models() {
    return false;
}

SpmTokenizer spm_tokenizer_from_model_file(const std::string& path, int) {
    throw Error(path +
                ": this build reads no SentencePiece tokenizer.model (built without "
                "libsentencepiece-dev); pass a tokenizer.bin with --tokenizer");
}

#else

namespace {

constexpr std::uintmax_t kMaxModelBytes = std::uintmax_t(64) << 20;  // Llama 2's is 500 KB

// The few fields of SentencePiece's ModelProto the library does not expose, read from its own
// serialization (protobuf wire format; the library parsed and checked it before us):
// ModelProto { 2: TrainerSpec { 3: model_type }, 3: NormalizerSpec { 1: name,
// 3: add_dummy_prefix, 4: remove_extra_whitespaces } }.
struct SpecFields {
    int model_type = 1;  // UNIGRAM = 1, BPE = 2, WORD = 3, CHAR = 4 (proto default: UNIGRAM)
    std::string normalizer = "nmt_nfkc";
    bool add_dummy_prefix = true, remove_extra_whitespaces = true;  // proto defaults
};

class Wire {
  public:
    explicit Wire(std::string_view b) : bytes_(b) {}
    bool done() const { return at_ >= bytes_.size(); }
    std::uint64_t varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
            const auto c = static_cast<unsigned char>(bytes_[at_++]);
            v |= std::uint64_t(c & 0x7f) << shift;
            if (!(c & 0x80)) return v;
        }
        bad_ = true;
        at_ = bytes_.size();
        return 0;
    }
    // The next field: its number, and its payload (a varint's value, or a length-delimited view).
    bool next(int& field, std::uint64_t& value, std::string_view& bytes) {
        if (done() || bad_) return false;
        const std::uint64_t key = varint();
        field = static_cast<int>(key >> 3);
        switch (key & 7) {
            case 0:
                value = varint();
                return !bad_;
            case 1:
                return skip(8);
            case 5:
                return skip(4);
            case 2: {
                const std::uint64_t n = varint();
                if (bad_ || n > bytes_.size() - at_) return bad_ = true, false;
                bytes = bytes_.substr(at_, n);
                at_ += n;
                return true;
            }
            default:
                return bad_ = true, false;
        }
    }

  private:
    bool skip(std::size_t n) {
        if (n > bytes_.size() - at_) return bad_ = true, false;
        at_ += n;
        return true;
    }
    std::string_view bytes_;
    std::size_t at_ = 0;
    bool bad_ = false;
};

SpecFields spec_fields(std::string_view model) {
    SpecFields s;
    Wire top(model);
    int field = 0;
    std::uint64_t v = 0;
    std::string_view sub;
    while (top.next(field, v, sub)) {
        if (field != 2 && field != 3) continue;
        Wire in(sub);
        int f = 0;
        std::uint64_t x = 0;
        std::string_view str;
        while (in.next(f, x, str)) {
            if (field == 2 && f == 3) s.model_type = x <= 4 ? static_cast<int>(x) : 0;  // 0: none
            if (field == 3 && f == 1) s.normalizer = std::string(str);
            if (field == 3 && f == 3) s.add_dummy_prefix = x != 0;
            if (field == 3 && f == 4) s.remove_extra_whitespaces = x != 0;
        }
    }
    return s;
}

// A library message on one line.
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace

bool reads_sentencepiece_models() {
    return true;
}

SpmTokenizer spm_tokenizer_from_model_file(const std::string& path, int vocab) {
    const std::string where = path + ": SentencePiece model: ";
    auto fail = [&](const std::string& why) -> void { throw Error(where + why); };
    const std::uintmax_t size = regular_file_size(path);  // a missing file or a folder: one line
    if (size > kMaxModelBytes)
        fail(std::to_string(size) + " bytes, more than a tokenizer.model holds (64 MiB)");
    if (size == 0) refuse_too_short(path, size, "a SentencePiece model", 1);
    sentencepiece::SentencePieceProcessor sp;
    if (const auto st = sp.Load(path); !st.ok()) {
        // The library's message for bytes that are not its protobuf names its own source line.
        const std::string why = st.ToString();
        fail(why.find("ParseFromArray") != std::string::npos
                 ? std::string("not one (its bytes do not parse as a SentencePiece ModelProto)")
                 : "not readable: " + one_line(why));
    }
    const SpecFields spec = spec_fields(std::string_view(sp.serialized_model_proto()));
    // SpmTokenizer merges pieces by score (BPE, as llama.cpp's and run.c's do), on the text as
    // given: a model that scores segmentations (Unigram) or rewrites the text first would encode
    // otherwise than SentencePiece, so it is refused rather than approximated.
    if (spec.model_type != 2)
        fail(std::string("a ") +
             (spec.model_type == 1   ? "Unigram"
              : spec.model_type == 3 ? "word"
              : spec.model_type == 4 ? "char"
                                     : "unknown-type") +
             " model; kvscope encodes BPE SentencePiece models (Llama 2's kind)");
    if (spec.normalizer != "identity")
        fail("normalization rule '" + spec.normalizer.substr(0, 40) +
             "'; kvscope encodes the text as given (rule 'identity', Llama 2's)");
    if (spec.remove_extra_whitespaces)
        fail("it removes extra whitespace first; kvscope encodes the text as given");
    const int n = sp.GetPieceSize();
    if (n != vocab)
        fail(std::to_string(n) + " pieces, the model's vocab_size is " + std::to_string(vocab));
    SpmVocab v;
    for (int i = 0; i < n; ++i) {
        v.tokens.push_back(sp.IdToPiece(i));
        v.scores.push_back(sp.GetScore(i));
        using T = SpmTokenizer::PieceType;
        const T ty = sp.IsUnknown(i)   ? T::Unknown
                     : sp.IsControl(i) ? T::Control
                     : sp.IsByte(i)    ? T::Byte
                     : sp.IsUnused(i)  ? T::Unused
                                       : T::Normal;
        v.types.push_back(static_cast<int>(ty));
    }
    v.bos = sp.bos_id();
    v.eos = sp.eos_id();
    v.unk = sp.unk_id();
    v.add_bos = v.bos >= 0;  // as transformers' LlamaTokenizer (add_bos_token true)
    v.add_space_prefix = spec.add_dummy_prefix;
    v.source = "tokenizer.model";
    return SpmTokenizer::from_vocab(std::move(v), where);
}

#endif

}  // namespace kvs
