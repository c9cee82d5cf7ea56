// SentencePiece tokenizer.model files, through Debian's libsentencepiece: a BPE model
// trained here with Llama 2's options (byte fallback, identity normalization, a dummy prefix,
// whitespace kept) is read into kvscope's SentencePiece-style encoder
// (core/tokenizers/spm_tokenizer.h), and both kvscope and libsentencepiece's own Encode tokenize
// the same texts: they must give the same ids. Then the model file in a Hugging Face folder, and
// the files kvscope refuses by name.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/loaders/hf_writer.h"
#include "core/loaders/model_loader.h"
#include "core/model/transformer_model.h"
#include "core/tokenizers/bpe_tokenizer.h"
#include "core/tokenizers/spm_model_file.h"
#include "core/util/error.h"
#include "tests/peer/tokenizer_corpus.h"
#include "tests/support/greedy_runs.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

// The English lessons as training text: prose, code, numbers, a few symbols. (The Chinese ones
// would need more pieces than a 512-token vocabulary has for their characters; CJK text is
// encoded through byte fallback here, as any character a model lacks.)
fs::path training_text(const fs::path& dir) {
    const fs::path out = dir / "corpus.txt";
    std::ofstream o(out);
    for (const auto& e : fs::directory_iterator(fs::path(KVSCOPE_SOURCE_DIR) / "lessons" / "en"))
        if (e.path().extension() == ".md") o << std::ifstream(e.path()).rdbuf() << "\n";
    return out;
}

// Trains a model of `vocab` pieces; `extra` overrides Llama 2's options.
fs::path train(const fs::path& dir, const std::string& name, int vocab,
               const std::string& extra = "") {
    const fs::path prefix = dir / name;
    // `extra` first: of an option given twice, the trainer keeps the first.
    const std::string args = extra + " --input=" + training_text(dir).string() +
                             " --model_prefix=" + prefix.string() +
                             " --vocab_size=" + std::to_string(vocab) +
                             " --model_type=bpe --byte_fallback=true"
                             " --normalization_rule_name=identity"
                             " --remove_extra_whitespaces=false --add_dummy_prefix=true"
                             " --character_coverage=0.999 --split_digits=true"
                             " --unk_id=0 --bos_id=1 --eos_id=2 --minloglevel=2";
    const auto st = sentencepiece::SentencePieceTrainer::Train(args);
    INFO(st.ToString());
    REQUIRE(st.ok());
    return prefix.string() + ".model";
}

}  // namespace

TEST_CASE("a SentencePiece BPE model: kvscope's encoder gives libsentencepiece's ids",
          "[spm][tokenizer]") {
    REQUIRE(reads_sentencepiece_models());
    const auto dir = test::temp_dir("spm-model");
    const fs::path model = train(dir, "m", 700);
    const SpmTokenizer ours = spm_tokenizer_from_model_file(model.string(), 700);
    CHECK(ours.kind().find("SentencePiece-style from tokenizer.model (700 pieces") == 0);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(model.string()).ok());
    CHECK(ours.bos_id() == sp.bos_id());
    CHECK(ours.eos() == sp.eos_id());

    std::vector<std::string> texts = test::kCorpus;
    for (const auto& t : test::random_texts(test::kRandomTexts)) texts.push_back(t);
    int differ = 0;
    std::string first_differing;
    for (const std::string& text : texts) {
        std::vector<int> want;
        REQUIRE(sp.Encode(text, &want).ok());
        std::vector<int> got = ours.encode(text);
        if (!got.empty() && got[0] == ours.bos_id()) got.erase(got.begin());  // BOS: ours only
        if (got != want && differ++ == 0) first_differing = text;
    }
    INFO(differ << " of " << texts.size() << " texts differ; the first: \"" << first_differing
                << "\"");
    CHECK(differ == 0);
    CHECK(texts.size() > 2000);
}

TEST_CASE("a Hugging Face folder with a tokenizer.model opens with it", "[spm][hf]") {
    const auto dir = test::temp_dir("spm-hf");
    const auto base = open_model("default");
    const int V = base->config().vocab_size;
    const fs::path model = train(dir, "tok", V);
    const auto& lm = dynamic_cast<const TransformerModel&>(*base);
    const fs::path folder = dir / "hf";
    write_hf_llama(folder.string(), lm.config(), lm.weights(),
                   dynamic_cast<const BpeTokenizer&>(base->tokenizer()), GgmlType::F32, 0);
    fs::remove(folder / "tokenizer.bin");
    fs::copy_file(model, folder / "tokenizer.model");
    const auto m = open_model(folder.string());
    CHECK(m->format().find("tokenizer.model (SentencePiece)") != std::string::npos);
    CHECK(m->tokenizer().kind().find("from tokenizer.model") != std::string::npos);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(model.string()).ok());
    std::vector<int> want;
    REQUIRE(sp.Encode("Once upon a time", &want).ok());
    want.insert(want.begin(), sp.bos_id());
    CHECK(m->tokenizer().encode("Once upon a time") == want);
    const auto info = test::run_cli({"info", "--model", folder.string()});
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("SentencePiece-style from tokenizer.model") != std::string::npos);
    // A tokenizer.model of another size than the embedding: one line naming both.
    const fs::path small = train(dir, "small", 400);
    fs::copy_file(small, folder / "tokenizer.model", fs::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(
        open_model(folder.string()),
        Catch::Contains("400 pieces, the model's vocab_size is " + std::to_string(V)));
}

TEST_CASE("tokenizer.model files kvscope would encode otherwise are refused by name",
          "[spm][hostile]") {
    const auto dir = test::temp_dir("spm-bad");
    auto refused = [](const fs::path& p, const std::string& why) {
        try {
            spm_tokenizer_from_model_file(p.string(), 400);
            FAIL("accepted " << p);
        } catch (const Error& e) {
            const std::string msg = e.what();
            CHECK(msg.find(why) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
            CHECK(msg.find(p.string()) == 0);
        }
    };
    refused(train(dir, "uni", 400, "--model_type=unigram"), "a Unigram model");
    refused(train(dir, "nfkc", 400, "--normalization_rule_name=nmt_nfkc"),
            "normalization rule 'nmt_nfkc'");
    refused(train(dir, "ws", 400, "--remove_extra_whitespaces=true"), "extra whitespace");
    test::write_file(dir / "junk.model", {'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'e', 'l'});
    refused(dir / "junk.model",
            "SentencePiece model: not one (its bytes do not parse as a SentencePiece ModelProto)");
    test::write_file(dir / "empty.model", {});
    refused(dir / "empty.model", "0 bytes, too short for a SentencePiece model (needs at least 1)");
    refused(dir / "absent.model", "absent.model");
    refused(dir, "");
    // Every cut of a real model: refused in one line or read whole, never a crash.
    const fs::path good = train(dir, "good", 400);
    const auto bytes = test::bytes_of(good);
    for (std::size_t cut = 0; cut < bytes.size(); cut += 997) {
        test::write_file(dir / "cut.model",
                         std::vector<unsigned char>(bytes.begin(), bytes.begin() + cut));
        try {
            spm_tokenizer_from_model_file((dir / "cut.model").string(), 400);
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    }
}
