#include "tests/support/test_helpers.h"

#include "core/loaders/checkpoint_writer.h"
#include "core/loaders/model_loader.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace kvs::test {
namespace fs = std::filesystem;

std::string shared_dir() {
    return KVSCOPE_SHARED_DIR;
}
std::string stories_model() {
    return shared_dir() + "/models/stories260K.bin";
}
std::string stories_tokenizer() {
    return shared_dir() + "/models/tok512.bin";
}

namespace {
struct TempRoot {
    fs::path root;
    TempRoot() {
        root = fs::temp_directory_path() / ("kvscope-test-" + std::to_string(::getpid()));
        fs::create_directories(root);
    }
    ~TempRoot() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
};
TempRoot& temp_root() {
    static TempRoot r;
    return r;
}
template <class T>
void put4(std::vector<unsigned char>& b, T v) {
    static_assert(sizeof(T) == 4);
    const std::size_t n = b.size();
    b.resize(n + 4);
    std::memcpy(b.data() + n, &v, 4);
}
void put_i32(std::vector<unsigned char>& b, std::int32_t v) {
    put4(b, v);
}
void put_f32(std::vector<unsigned char>& b, float v) {
    put4(b, v);
}
}  // namespace

std::unique_ptr<Model> open_tiny_model(const std::string& tag) {
    return open_model(write_tiny_model(temp_dir(tag)));
}

const std::string& tiny_model() {
    static const std::string p = write_tiny_model(temp_dir("tiny-model"));
    return p;
}

const Model& shared_tiny_model() {
    static const auto m = open_model(tiny_model());
    return *m;
}

std::vector<std::unique_ptr<Model>> llama2c_models() {
    std::vector<std::unique_ptr<Model>> ms;
    ms.push_back(open_model("default"));
    if (std::filesystem::exists(stories_model()))  // GQA: 8 query heads, 4 K/V heads
        ms.push_back(open_model(stories_model(), stories_tokenizer()));
    return ms;
}

bool one_line(const std::string& s) {
    return !s.empty() && s.find('\n') == s.size() - 1;
}

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

fs::path temp_dir(const std::string& tag) {
    static int counter = 0;
    fs::path p = temp_root().root / (tag + "-" + std::to_string(counter++));
    fs::create_directories(p);
    return p;
}

ModelConfig tiny_config() {
    ModelConfig c;
    c.dim = 16;
    c.hidden_dim = 40;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.vocab_size = 300;
    c.seq_len = 64;
    c.shared_classifier = true;
    return c;
}

std::vector<unsigned char> synthetic_checkpoint(const ModelConfig& c, std::uint32_t seed) {
    std::vector<unsigned char> b;
    put_i32(b, c.dim);
    put_i32(b, c.hidden_dim);
    put_i32(b, c.n_layers);
    put_i32(b, c.n_heads);
    put_i32(b, c.n_kv_heads);
    put_i32(b, c.shared_classifier ? c.vocab_size : -c.vocab_size);
    put_i32(b, c.seq_len);
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.5f);
    for (std::size_t i = 0; i < c.stored_floats(); ++i) put_f32(b, nd(rng));
    return b;
}

std::vector<unsigned char> synthetic_tokenizer(const std::vector<std::string>& pieces,
                                               int total_vocab) {
    return tokenizer_file_bytes(pieces, total_vocab);
}

void write_file(const fs::path& p, const std::vector<unsigned char>& bytes) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::string write_tiny_model(const fs::path& dir) {
    const ModelConfig c = tiny_config();
    write_file(dir / "tiny.bin", synthetic_checkpoint(c));
    write_file(dir / "tiny.tok.bin",
               synthetic_tokenizer({" ", "e", " t", "he", " the", "a", " a", "in", " c", "at"},
                                   c.vocab_size));
    return (dir / "tiny.bin").string();
}

RunResult run_cli(const std::vector<std::string>& args, const std::string* input) {
    return run_cli_env({}, args, input);
}

RunResult run_cli_env(const std::vector<std::string>& env, const std::vector<std::string>& args,
                      const std::string* input) {
    const fs::path dir = temp_dir("cli");
    std::string cmd = env.empty() ? "" : "env";
    for (const auto& e : env) cmd.append(" ").append(quote(e));
    if (!cmd.empty()) cmd += ' ';
    cmd += quote(KVSCOPE_CLI);
    for (const auto& a : args) cmd.append(" ").append(quote(a));
    if (input) {
        write_file(dir / "in", std::vector<unsigned char>(input->begin(), input->end()));
        cmd += " <" + quote((dir / "in").string());
    }
    cmd += " >" + quote((dir / "out").string()) + " 2>" + quote((dir / "err").string());
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(dir / "out");
    r.err = slurp(dir / "err");
    return r;
}

RunResult run_cli_measured(const std::vector<std::string>& args) {
    const fs::path dir = temp_dir("cli");
    const std::string out = (dir / "out").string(), err = (dir / "err").string();
    std::vector<std::string> words = {KVSCOPE_CLI};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    RunResult r;
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, KVSCOPE_CLI, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return r;
    int status = 0;
    struct rusage ru {};
    if (wait4(pid, &status, 0, &ru) != pid) return r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.peak_rss_kib = ru.ru_maxrss;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

}  // namespace kvs::test
