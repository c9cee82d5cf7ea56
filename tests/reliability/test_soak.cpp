// Bounded memory over a long session: `kvscope-cli soak` runs sessions back to back
// with the full trace; once the trace's budget is reached, resident memory stays flat.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {
// The "soak: key=value ..." summary line.
std::map<std::string, long long> summary(const std::string& out) {
    std::map<std::string, long long> v;
    const auto at = out.rfind("\nsoak: steps=");
    if (at == std::string::npos) return v;
    std::istringstream s(out.substr(at + 7));
    std::string kv;
    while (s >> kv) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos) v[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
    }
    return v;
}
}  // namespace

TEST_CASE(
    "soak: 4000 decode steps over repeated sessions keep the trace within its budget and "
    "resident memory flat",
    "[soak][cli]") {
    // Under AddressSanitizer, freed memory waits in a quarantine (256 MiB by default) before
    // reuse, which would read as growth here; with no quarantine ASan reuses memory as malloc
    // does. Without ASan the variable is ignored.
    const char* prev = std::getenv("ASAN_OPTIONS");
    const std::string asan = std::string(prev ? prev : "") + (prev && *prev ? ":" : "") +
                             "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
    setenv("ASAN_OPTIONS", asan.c_str(), 1);
    const auto model = test::write_tiny_model(test::temp_dir("soak"));
    const auto r = test::run_cli({"soak", "--model", model, "--backend", "cpu", "--steps", "4000",
                                  "--trace-budget-kib", "64", "--report-every", "250"});
    if (prev)
        setenv("ASAN_OPTIONS", prev, 1);
    else
        unsetenv("ASAN_OPTIONS");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto v = summary(r.out);
    REQUIRE(v.count("rss_end_kib"));
    CHECK(v.at("steps") == 4000);
    // The tiny model's context is 64 tokens: many sessions, each reset with a new prompt
    // (emoji, Chinese, control bytes and invalid UTF-8 among them) and run to the context limit
    // (the last one is cut short by --steps).
    CHECK(v.at("sessions") >= 4000 / 64);
    CHECK(v.at("context_full") >= v.at("sessions") - 1);  // each ran to the context limit
    CHECK(v.at("budget_bytes") == 64 * 1024);
    CHECK(v.at("payload_max_bytes") <= v.at("budget_bytes"));
    CHECK(v.at("payload_max_bytes") > v.at("budget_bytes") / 2);  // the budget was reached
    REQUIRE(v.at("warm_step") > 0);
    CHECK(v.at("warm_step") <= 2000);
    // Flat: what 3000 more decode steps add is far below what keeping their payloads would.
    CHECK(v.at("rss_end_kib") - v.at("rss_warm_kib") <= 512);
}
