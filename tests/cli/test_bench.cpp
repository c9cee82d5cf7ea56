// kvscope-cli bench, run once at a tiny size: the report and CSV have their structure, every rate
// is positive, and the KV cache makes a 256-token decode faster. Speed goals themselves live in
// the benchmark's output (docs/bench/README.md), not in tests.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;

namespace {

// A synthetic model small enough to run every measurement in well under a second, with a
// context long enough for a 256-token decode after a short prompt.
std::string bench_model() {
    static const std::string path = [] {
        const auto dir = test::temp_dir("bench-model");
        ModelConfig c = test::tiny_config();
        c.seq_len = 300;
        test::write_file(dir / "bench.bin", test::synthetic_checkpoint(c, 5));
        test::write_file(dir / "bench.tok.bin",
                         test::synthetic_tokenizer({" ", "e", " t", "he", " the"}, c.vocab_size));
        return (dir / "bench.bin").string();
    }();
    return path;
}

struct Row {
    double min = 0, median = 0, max = 0;
    int repeats = 0;
};
// "length,measure,metric" -> row, from the CSV the bench wrote ('#' lines are the header).
std::map<std::string, Row> read_csv(const std::string& path) {
    std::ifstream f(path);
    REQUIRE(f.good());
    std::map<std::string, Row> rows;
    std::string line;
    bool header_seen = false;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (!header_seen) {
            CHECK(line == "length,measure,metric,unit,min,median,max,repeats");
            header_seen = true;
            continue;
        }
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        REQUIRE(cells.size() == 8);
        Row r{std::stod(cells[4]), std::stod(cells[5]), std::stod(cells[6]), std::stoi(cells[7])};
        CHECK(r.min <= r.median);
        CHECK(r.median <= r.max);
        rows[cells[0] + "," + cells[1] + "," + cells[2]] = r;
    }
    CHECK(header_seen);
    return rows;
}

}  // namespace

TEST_CASE("bench measures every mode at every length and writes its CSV", "[cli][bench]") {
    const auto dir = test::temp_dir("bench");
    const std::string csv = (dir / "bench.csv").string();
    const auto r = run_cli({"bench", "--model", bench_model(), "--backend", "cpu", "--lengths",
                            "256,8", "--repeats", "3", "--prompt", "the cat", "--csv", csv});
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* text :
         {"length L: prefill = a prompt of L tokens", "machine: ", "load average at start",
          "per-op time", "growth of total", "tracing cost", "per-op timing cost",
          "fast CPU ops vs the plain run.c-order ops"})
        CHECK(r.out.find(text) != std::string::npos);

    const auto rows = read_csv(csv);
    for (const char* L : {"8", "256"})
        for (const char* m :
             {"prefill_batched", "prefill_token_by_token", "decode_cached", "decode_uncached"}) {
            const std::string key = std::string(L) + "," + m + ",";
            INFO(key);
            REQUIRE(rows.count(key + "tokens_per_s"));
            CHECK(rows.at(key + "tokens_per_s").min > 0);
            CHECK(rows.at(key + "tokens_per_s").repeats == 3);
            CHECK(rows.at(key + "counted_flops").median > 0);
            CHECK(rows.at(key + "counted_bytes").median > 0);
            CHECK(rows.at(key + "achieved_gflops").min > 0);
            CHECK(rows.at(key + "op_matmul").median > 0);
        }
    CHECK(rows.count("8,prefill_batched,time_to_first_token"));
    CHECK(rows.count("256,decode_cached,time_per_output_token"));
    // The cache's whole point: 256 decode steps are cheaper reusing K/V than recomputing.
    CHECK(rows.at("256,decode_cached,seconds").median <
          rows.at("256,decode_uncached,seconds").median);
    // Counted work grows the way the model says: uncached recomputes every row.
    CHECK(rows.at("256,decode_uncached,counted_flops").median >
          20 * rows.at("256,decode_cached,counted_flops").median);
    REQUIRE(rows.count("all,decode_cached,growth_exponent"));
    REQUIRE(rows.count("all,decode_uncached,growth_exponent"));
    CHECK(rows.at("all,decode_uncached,growth_exponent").median >
          rows.at("all,decode_cached,growth_exponent").median);
    CHECK(rows.count("256,decode_cached,tracing_cost_fraction"));
    CHECK(rows.count("256,decode_cached,op_timing_cost_fraction"));
    REQUIRE(rows.count("256,decode_cached_reference_ops,tokens_per_s"));
    CHECK(rows.at("256,decode_cached_reference_ops,tokens_per_s").min > 0);
    CHECK(rows.at("256,decode_cached,speedup_over_reference_ops").median > 0);
}

TEST_CASE("bench rejects what it cannot run with one line and exit code 2", "[cli][bench]") {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--lengths", "0"},
                                                 {"--lengths", "8,x"},
                                                 {"--repeats", "0"},
                                                 {"--threads", "0"},
                                                 {"--lengths", "5000"}}) {
        std::vector<std::string> full = {"bench", "--model", bench_model(), "--backend", "cpu"};
        full.insert(full.end(), args.begin(), args.end());
        const auto r = run_cli(full);
        INFO("args " << args[0] << " " << args[1] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(!r.err.empty());
        CHECK(r.err.find('\n') == r.err.size() - 1);
    }
}
