// Checkpoints are mapped, not copied: a model costs about its
// file size in resident memory, the CPU backend computes on the mapping, and the mapped and the
// copied reader give the same numbers. Models here come from `kvscope-cli make-model`.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>

#include "core/loaders/checkpoint.h"
#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

std::size_t field(const std::string& out, const std::string& name) {
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(name + "=([0-9]+)")));
    return std::stoull(m[1]);
}

}  // namespace

TEST_CASE("make-model writes a checkpoint of the shape asked for, with a tokenizer beside it",
          "[mapped][cli]") {
    const fs::path dir = test::temp_dir("make-model");
    const std::string path = (dir / "m.bin").string();
    const auto r = test::run_cli({"make-model", "--out", path, "--shape", "small", "--layers", "2",
                                  "--seq-len", "64", "--seed", "3"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const Checkpoint ck = load_checkpoint(path);
    CHECK(ck.config.dim == 288);
    CHECK(ck.config.hidden_dim == 768);
    CHECK(ck.config.n_layers == 2);
    CHECK(ck.config.seq_len == 64);
    CHECK(fs::file_size(path) == 28 + 4 * ck.config.stored_floats());
    CHECK(ck.weights.norm_att[0] == 1.0f);
    CHECK(ck.weights.wq[0] != 0.0f);
    CHECK(fs::exists(dir / "m.tok.bin"));
    // Written through core/output_file: no temporary file is left beside it.
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    CHECK(names == std::set<std::string>{"m.bin", "m.tok.bin"});
    // The weights are one splitmix64 stream of the seed: the same seed, the same bytes.
    const std::string again = (dir / "again" / "m.bin").string();
    fs::create_directories(dir / "again");
    REQUIRE(test::run_cli({"make-model", "--out", again, "--shape", "small", "--layers", "2",
                           "--seq-len", "64", "--seed", "3"})
                .exit_code == 0);
    CHECK(test::slurp(again) == test::slurp(path));
    // Bad shapes: one line, exit 2, nothing written.
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--heads", "7"}, {"--shape", "huge"}, {"--vocab", "12"}}) {
        std::vector<std::string> args = {"make-model", "--out", (dir / "bad.bin").string()};
        args.insert(args.end(), bad.begin(), bad.end());
        const auto b = test::run_cli(args);
        INFO(bad[0] << " " << bad[1] << ": " << b.err);
        CHECK(b.exit_code == 2);
        CHECK(b.err.find('\n') == b.err.size() - 1);
        CHECK(!fs::exists(dir / "bad.bin"));
    }
}

TEST_CASE("a mapped checkpoint gives the same logits as the copied reader", "[mapped]") {
    const fs::path dir = test::temp_dir("mapped-same");
    const std::string path = test::write_tiny_model(dir);
    const auto bytes = test::slurp(path);
    const Checkpoint mapped = load_checkpoint(path);
    const Checkpoint copied =
        parse_checkpoint(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), path);
    REQUIRE(mapped.weights.all.size() == copied.weights.all.size());
    CHECK(std::equal(mapped.weights.all.begin(), mapped.weights.all.end(),
                     copied.weights.all.begin()));
    // The mapping is not a heap copy: its floats sit 28 bytes past a page boundary.
    CHECK(reinterpret_cast<std::uintptr_t>(mapped.weights.all.data()) % 4096 == 28);

    const auto m = open_model(path);
    CpuBackend cpu;
    SessionConfig cfg;
    cfg.max_new_tokens = 8;
    cfg.stop_at_end_token = false;
    Session s(*m, cpu, cfg);
    s.set_prompt("the cat");
    while (!s.finished()) s.step();
    CHECK(s.generated() == 8);
}

TEST_CASE("resident memory after loading and running a model stays near its file size",
          "[mapped][memory]") {
#ifdef KVSCOPE_SANITIZED
    // AddressSanitizer's shadow memory and quarantine are resident as well, so the bound is a
    // property of the plain build; scripts/test.sh checks it there before the sanitizer suite.
    WARN("resident memory is not bounded under AddressSanitizer; the plain build checks it");
    return;
#endif
    // 27M parameters, 109 MB: big enough that a second copy of the weights shows clearly above
    // the program's own few MiB, small enough to write and run in about a second.
    const fs::path dir = test::temp_dir("mapped-rss");
    const std::string path = (dir / "mid.bin").string();
    const auto w =
        test::run_cli({"make-model", "--out", path, "--shape", "small", "--dim", "512", "--hidden",
                       "1536", "--layers", "8", "--heads", "8", "--seq-len", "128"});
    INFO(w.err);
    REQUIRE(w.exit_code == 0);
    const double file_kib = static_cast<double>(fs::file_size(path)) / 1024.0;
    // soak reads VmRSS / VmHWM of its own process after each decode step; every weight has been
    // read by then (the whole forward pass ran), so the mapping is resident.
    const auto r =
        test::run_cli({"soak", "--model", path, "--backend", "cpu", "--steps", "4",
                       "--report-every", "1", "--trace-budget-kib", "64", "--temperature", "0"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const double peak = static_cast<double>(field(r.out, "rss_peak_kib"));
    const double rss = static_cast<double>(field(r.out, "rss_end_kib"));
    INFO("file " << file_kib << " KiB, RSS " << rss << " KiB, peak " << peak << " KiB");
    CHECK(rss > 0.9 * file_kib);   // the weights were read (mapped pages count as resident)
    CHECK(peak < 1.3 * file_kib);  // no second copy: a copy would make this 2x or more
}
