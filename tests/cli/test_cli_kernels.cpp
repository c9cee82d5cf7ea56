// kvscope-cli kernels: every op on every implementation this build has, checked against the
// reference; bad options are one line and exit 2.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/test_helpers.h"

using namespace kvs;
using test::run_cli;

namespace {
// Whether some line of `out` starts with `op` and names `impl`.
bool has_row(const std::string& out, const std::string& op, const std::string& impl) {
    std::size_t start = 0;
    while (start < out.size()) {
        const std::size_t end = out.find('\n', start);
        const std::string line = out.substr(start, end - start);
        if (line.rfind(op, 0) == 0 && line.find(impl) != std::string::npos) return true;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return false;
}
}  // namespace

TEST_CASE("kvscope-cli kernels runs every op on every implementation and agrees", "[cli]") {
    const std::string model = test::write_tiny_model(test::temp_dir("cli-kernels"));
    const auto r = run_cli({"kernels", "--model", model, "--repeats", "2", "--keys", "40"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("median of 2 runs") != std::string::npos);
    for (const char* op :
         {"rmsnorm", "matmul decode q", "matmul decode logits", "matmul prefill w1",
          "attention decode", "attention prefill", "swiglu", "layernorm", "gelu"})
        for (const char* impl : {"cpu-reference", " cpu ", "cuda-emulated"}) {
            INFO(op << " on " << impl);
            CHECK(has_row(r.out, op, impl));
        }
    CHECK(r.out.find("1 queries x 40 keys") != std::string::npos);  // --keys reaches the op
    // Each block-size variant of a kernel that has them, on the emulated CUDA backend, in the same
    // table and checked against the same reference (a wrong one prints DIFFERS, exit 1).
    for (const auto& [op, block] : std::vector<std::pair<const char*, const char*>>{
             {"rmsnorm", "rmsnorm 32 threads "},
             {"rmsnorm", "rmsnorm 128 threads*"},
             {"matmul decode logits", "matvec 4 rows "},
             {"matmul decode logits", "matvec 32 rows "},
             {"attention decode", "combine 256 threads "},
             {"matmul decode logits", "matvec auto rows*"},
             {"swiglu", "elementwise 1024 threads "},
             {"layernorm", "layernorm 32 threads "},
             {"gelu", "elementwise 1024 threads "}}) {
        INFO(op << " with " << block);
        CHECK(has_row(r.out, op, std::string("cuda-emulated  ") + block));
    }
    CHECK(r.out.find("DIFFERS") == std::string::npos);
    // A build or machine without a device says why the cuda rows are missing; asked to require
    // one, it fails instead (scripts/gpu-check.sh: a check that ran nothing must not pass).
    if (r.out.find(" cuda ") == std::string::npos) {
        CHECK(r.out.find("cuda: not run (") != std::string::npos);
        const auto req = run_cli({"kernels", "--model", model, "--repeats", "1", "--require-gpu"});
        CHECK(req.exit_code == 2);
        CHECK(req.err.find("no CUDA device runs the cuda rows") != std::string::npos);
        CHECK(req.out.empty());
    }
}

TEST_CASE("kvscope-cli kernels: bad options are one line, exit 2", "[cli]") {
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"kernels", "--repeats", "0"},
                                               {"kernels", "--keys", "-3"},
                                               {"kernels", "--backend", "cpu"},
                                               {"kernels", "--model", "/nonexistent/model.bin"}}) {
        const auto r = run_cli(args);
        INFO("args: " << args[1] << " stderr: " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(!r.err.empty());
        CHECK(r.err.find('\n') == r.err.size() - 1);
    }
}
