// kvscope-cli as people used to other programs type it: llama.cpp's llama-cli line, transformers'
// and vLLM's option names, a model as the first word; and the rough edges a first try found.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;
using test::tiny_model;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Exit 2, one line on stderr holding every fragment.
void answers(const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
    const auto r = run_cli(args);
    std::string line;
    for (const auto& a : args) line += a + " ";
    INFO("kvscope-cli " << line << "-> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(test::one_line(r.err));
    for (const auto& f : fragments) CHECK(has(r.err, f));
}

}  // namespace

TEST_CASE("llama-cli's line without a command runs generate", "[cli][habits]") {
    const auto plain = run_cli({"generate", "-m", tiny_model(), "-p", "the cat", "-n", "4"});
    REQUIRE(plain.exit_code == 0);
    // As llama-cli is typed, its chat switch included; and the model as the first word.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"-m", tiny_model(), "-p", "the cat", "-n", "4"},
             {"-m", tiny_model(), "-p", "the cat", "-n", "4", "-no-cnv"},
             {"--model", tiny_model(), "--prompt", "the cat", "--n-predict", "4"},
             {tiny_model(), "-p", "the cat", "-n", "4"},
             {"generate", tiny_model(), "-p", "the cat", "-n", "4"},
             {"generate", "-p", "the cat", tiny_model(), "-n", "4"}}) {
        const auto r = run_cli(args);
        INFO(args.front() << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == plain.out);
    }
}

// info's report without its measured opening time.
static std::string info_of(const std::vector<std::string>& args) {
    std::string out = run_cli(args).out;
    const auto at = out.find("opened in ");
    return at == std::string::npos ? out : out.erase(at, out.find('\n', at) - at);
}

TEST_CASE("a model as the first word of the commands that take one", "[cli][habits]") {
    CHECK(info_of({"info", tiny_model()}) == info_of({"info", "--model", tiny_model()}));
    CHECK(info_of({"info", tiny_model()}).find("file: " + tiny_model()) != std::string::npos);
    const auto c = run_cli({"compare", tiny_model(), "-p", "the", "-n", "3", "--quiet"});
    CHECK(c.exit_code == 0);
    CHECK(run_cli({"explain", "toy", "--head", "even"}).exit_code == 0);
    CHECK(run_cli({"mask", tiny_model(), "-n", "2", "--json"}).exit_code == 0);
    // Both ways at once, or two words: refused by name.
    answers({"info", tiny_model(), "--model", "toy"}, {"both give the model"});
    answers({"info", tiny_model(), tiny_model()}, {"unexpected argument"});
}

TEST_CASE("the -m option on every command that takes a model, export included", "[cli][habits]") {
    const fs::path dir = test::temp_dir("habits-export");
    const auto r = run_cli({"export", "--gguf", (dir / "t.gguf").string(), "-m", tiny_model()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(dir / "t.gguf"));
    CHECK(run_cli({"info", "-m", (dir / "t.gguf").string()}).exit_code == 0);
    // export's --type takes what its help lists: the K-quants too.
    const auto help = run_cli({"export", "--help"});
    CHECK(has(help.out, "q6_k"));
    CHECK(run_cli({"export", tiny_model(), "--gguf", (dir / "k.gguf").string(), "--type", "q4_k"})
              .exit_code == 0);
}

TEST_CASE("other programs' options answer with the kvscope equivalent", "[cli][habits]") {
    const std::string m = tiny_model();
    // llama.cpp
    answers({"-m", m, "-p", "hi", "-ngl", "99"}, {"-ngl 99", "--backend cuda"});
    answers({"generate", "-m", m, "-ngl"}, {"-ngl", "--backend cuda"});
    answers({"generate", "-m", m, "--n-gpu-layers", "33"}, {"--backend cuda"});
    answers({"generate", "-m", m, "-cnv"}, {"-cnv", "no chat mode"});
    answers({"generate", "-m", m, "--device", "CUDA0"}, {"--backend cuda"});
    // transformers
    answers({"generate", "-m", m, "--device", "cuda:0"}, {"--backend cuda"});
    answers({"generate", "-m", m, "--device", "cpu"}, {"--backend cpu"});
    answers({"generate", "-m", m, "--torch_dtype", "bfloat16"}, {"--weights bf16"});
    answers({"generate", "-m", m, "--dtype", "float16"}, {"--weights f16"});
    answers({"generate", "-m", m, "--max_new_tokens", "20"}, {"-n 20"});
    answers({"generate", "-m", m, "--do_sample"}, {"--temp"});
    // vLLM
    answers({"generate", "-m", m, "--max-tokens", "20"}, {"-n 20"});
    answers({"generate", "-m", m, "--max-model-len=128"}, {"-c 128"});
    answers({"serve", "-m", m, "--tensor-parallel-size", "2"}, {"one device"});
    // Commands of other programs.
    answers({"run", m}, {"unknown command 'run'", "generate -m MODEL"});
    answers({"chat"}, {"no chat mode"});
    answers({"pull", "ORG/NAME"}, {"hf download", "ollama pull"});
}

TEST_CASE("one dash and a word is never a short option with its value run on", "[cli][habits]") {
    // -ngl would read as -n gl, -no-cnv as -n o-cnv: unknown, or understood, never misread.
    answers({"generate", "-m", tiny_model(), "-nx"}, {"unknown option '-nx'"});
    const auto r = run_cli({"generate", "-m", tiny_model(), "-p", "the", "-n", "2", "-no-cnv"});
    CHECK(r.exit_code == 0);
}

TEST_CASE("an option where a value belongs is refused by name", "[cli][habits]") {
    answers({"generate", "-m", tiny_model(), "--csv", "-p", "hi"}, {"--csv needs a value", "-p"});
    answers({"generate", "-m", tiny_model(), "--trace-json", "--max-tokens"},
            {"--trace-json needs a value"});
    // A value that starts with a dash but is no option still passes: a negative number's message.
    answers({"generate", "-m", tiny_model(), "--temp", "-1"}, {"out of range"});
}

TEST_CASE("the rough edges of a first try", "[cli][habits]") {
    // The lesson's number anywhere on the line.
    const auto lesson = run_cli({"lesson", "--lang", "zh", "1", "--quiet"});
    INFO(lesson.err);
    CHECK(lesson.exit_code == 0);
    CHECK(has(lesson.out, "结果"));
    // A transposition is one edit: --lenghts is --lengths, not --weights.
    answers({"bench", "--lenghts", "32"}, {"did you mean --lengths?"});
    // replay --help: exit 0, one usage line; without a trace: one line, exit 2.
    const auto help = run_cli({"replay", "--help"});
    CHECK(help.exit_code == 0);
    std::size_t usages = 0;
    for (std::size_t at = help.out.find("usage:"); at != std::string::npos;
         at = help.out.find("usage:", at + 1))
        ++usages;
    CHECK(usages == 1);
    CHECK(has(help.out, "usage: kvscope-cli replay TRACE.json [options]"));
    answers({"replay"}, {"which run?"});
    // mask: -n N is the one name (N tokens: the prefill's, then N-1 decode steps); --steps, the
    // older spelling, is N-1; both at once is an error.
    const auto n = run_cli({"mask", tiny_model(), "-n", "3", "--json"});
    const auto steps = run_cli({"mask", tiny_model(), "--steps", "2", "--json"});
    REQUIRE(n.exit_code == 0);
    REQUIRE(steps.exit_code == 0);
    CHECK(has(n.out, "\"step\":2"));
    CHECK(has(steps.out, "\"step\":2"));
    answers({"mask", tiny_model(), "-n", "3", "--steps", "2"}, {"say the same"});
    CHECK(has(run_cli({"mask", "--help"}).out, "-n, --n-predict, --max-new-tokens N"));
}

TEST_CASE("bench's default lengths stay within the model's context", "[cli][habits]") {
    // The tiny model's context is 64: of 32, 64, 128, 256, 512 only 32 fits every measure.
    const auto r = run_cli({"bench", tiny_model(), "--repeats", "1", "--warmup", "0"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(has(r.out, " 32 "));
    CHECK_FALSE(has(r.out, "not run (beyond the context"));
    CHECK_FALSE(has(r.out, "L=512"));
}

namespace {

// stderr of `kvscope-cli ARGS` run on a terminal (script(1) gives it one), stdout dropped.
std::string on_terminal(const std::vector<std::string>& args, const fs::path& dir) {
    std::string cli = test::quote(KVSCOPE_CLI);
    for (const auto& a : args) cli += " " + test::quote(a);
    const std::string cmd = "KVSCOPE_PROGRESS_AFTER=0 script -qec " +
                            test::quote(cli + " >/dev/null") + " /dev/null > " +
                            test::quote((dir / "tty").string());
    REQUIRE(std::system(cmd.c_str()) == 0);
    return test::slurp(dir / "tty");
}

}  // namespace

TEST_CASE("long work shows progress on a terminal and is quiet when piped", "[cli][habits]") {
    const fs::path dir = test::temp_dir("habits-progress");
    test::write_file(dir / "p.txt", {'t', 'h', 'e', '\n', 'a', '\n'});
    const std::string trace = (dir / "run.trace.json").string();
    const std::vector<std::string> serve = {
        "serve", tiny_model(), "--prompts", (dir / "p.txt").string(), "-n", "8"};
    const std::vector<std::string> write = {"generate", tiny_model(),   "-n",
                                            "20",       "--trace-json", trace};
    const std::vector<std::string> read = {"replay", trace};
    // Piped (here: into a file), with the delay at 0: nothing but the commands' own lines.
    const auto piped_serve = test::run_cli_env({"KVSCOPE_PROGRESS_AFTER=0"}, serve);
    const auto piped_write = test::run_cli_env({"KVSCOPE_PROGRESS_AFTER=0"}, write);
    const auto piped_read = test::run_cli_env({"KVSCOPE_PROGRESS_AFTER=0"}, read);
    REQUIRE(piped_serve.exit_code == 0);
    REQUIRE(piped_write.exit_code == 0);
    REQUIRE(piped_read.exit_code == 0);
    CHECK_FALSE(has(piped_serve.err, "requests done"));
    CHECK_FALSE(has(piped_write.err, "written"));
    CHECK_FALSE(has(piped_read.err, " read"));
    // On a terminal: the line, rewritten in place (\r), cleared before the command ends.
    const std::string s = on_terminal(serve, dir);
    INFO(s);
    CHECK(has(s, "kvscope-cli serve: "));
    CHECK(has(s, "requests done"));
    CHECK(has(s, "tokens generated"));
    CHECK(has(s, "\r"));
    const std::string w = on_terminal(write, dir);
    INFO(w);
    CHECK(has(w, trace + ": "));
    CHECK(has(w, " written"));
    const std::string r = on_terminal(read, dir);
    INFO(r);
    CHECK(has(r, "kvscope-cli replay: "));
    CHECK(has(r, " read"));
}
