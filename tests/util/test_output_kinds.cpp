// A user's file is never replaced by an output unless it is kvscope's own earlier output of that
// kind, known by the whole header every such output starts with (core/util/output_file.h's
// OutputKind): the first 4 bytes were the rule, so a notes file starting "sess" was replaced by
// a steps CSV, a JSON file starting {"kv by a trace, any GGUF by an export. Through the CLI for
// its outputs (trace JSON, trace events, both CSVs, GGUF, Hugging Face files, make-model's
// checkpoint), and the window's two (a screenshot's PNG text chunk, the layout record's first
// key) through their kinds.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "core/files/safetensors_file.h"
#include "core/loaders/gguf_writer.h"
#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/session/trace_json.h"
#include "core/util/output_file.h"
#include "tests/support/test_helpers.h"

using namespace kvs;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& s) {
    test::write_file(p, std::vector<unsigned char>(s.begin(), s.end()));
}

// `args` must refuse to write `path`, which then still holds `before`.
void kept(const std::vector<std::string>& args, const fs::path& path, const std::string& before) {
    const auto r = test::run_cli(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(path.filename().string() + ": already holds something else") !=
          std::string::npos);
    CHECK(test::slurp(path) == before);
}

}  // namespace

TEST_CASE("an output replaces kvscope's own earlier output of its kind, known by its whole header",
          "[reliability][output][cli]") {
    const auto dir = test::temp_dir("output-kinds");
    const std::string model = test::write_tiny_model(dir);
    auto run = [&](std::vector<std::string> outputs) {
        std::vector<std::string> args = {"generate", "--model",          model, "--prompt",
                                         "a",        "--max-new-tokens", "1"};
        args.insert(args.end(), outputs.begin(), outputs.end());
        return args;
    };
    // Files of the user's whose first 4 bytes are the outputs' own.
    const fs::path notes = dir / "notes.txt", data = dir / "data.json", events = dir / "ev.json",
                   table = dir / "table.csv";
    write(notes, "sessions to plan: monday, tuesday\n");
    write(data, "{\"kvstore\": [1, 2, 3]}\n");
    write(events, "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{}}]}\n");
    write(table, "position,token,count\n1,a,3\n");
    kept(run({"--csv", notes.string()}), notes, test::slurp(notes));
    kept(run({"--trace-json", data.string()}), data, test::slurp(data));
    kept(run({"--trace-events", events.string()}), events, test::slurp(events));
    kept(run({"--attention-csv", table.string()}), table, test::slurp(table));

    // kvscope's own earlier outputs are replaced, an empty file too.
    const fs::path csv = dir / "run.csv", trace = dir / "t.json", ev = dir / "t.events.json",
                   att = dir / "att.csv", empty = dir / "empty.json";
    write(empty, "");
    for (int round = 0; round < 2; ++round) {
        const auto r =
            test::run_cli(run({"--csv", csv.string(), "--trace-json", trace.string(),
                               "--trace-events", ev.string(), "--attention-csv", att.string()}));
        INFO(r.err);
        CHECK(r.exit_code == 0);
    }
    CHECK(test::run_cli(run({"--trace-json", empty.string()})).exit_code == 0);
    CHECK(test::slurp(empty).starts_with("{\"kvscope_trace\":"));

    // GGUF: over an earlier export, replaced; over a GGUF someone else wrote (the same bytes but
    // the description), kept.
    const fs::path gguf = dir / "m.gguf";
    for (int round = 0; round < 2; ++round)
        CHECK(test::run_cli({"export", "--model", model, "--gguf", gguf.string()}).exit_code == 0);
    std::string foreign = test::slurp(gguf);
    const auto at = foreign.find("written by kvscope");
    REQUIRE(at != std::string::npos);
    foreign.replace(at, 18, "written by someone");
    write(gguf, foreign);
    kept({"export", "--model", model, "--gguf", gguf.string()}, gguf, foreign);

    // make-model's llama2.c checkpoint has no header of kvscope's: only an empty file is replaced.
    const fs::path ck = dir / "made.bin";
    CHECK(test::run_cli({"make-model", "--out", ck.string(), "--shape", "small"}).exit_code == 0);
    const std::string made = test::slurp(ck);
    kept({"make-model", "--out", ck.string(), "--shape", "small"}, ck, made);

    // A Hugging Face folder holding someone's safetensors file (no config.json yet): kept.
    const fs::path hf = dir / "hf";
    fs::create_directories(hf);
    std::string st(8, '\0');
    st[0] = 28;
    st += R"({"__metadata__":{"a":"b"}}  )";
    write(hf / "model.safetensors", st);
    kept({"export", "--model", model, "--hf", hf.string()}, hf / "model.safetensors", st);
}

TEST_CASE("output kinds know kvscope's own headers and nothing shorter", "[reliability][output]") {
    const auto dir = test::temp_dir("output-kind-heads");
    CHECK(trace_json_output().own("{\"kvscope_trace\":2,\"indexing\":{}}"));
    CHECK(trace_json_output().own("{\n  \"kvscope_trace\" : 2"));
    CHECK_FALSE(trace_json_output().own("{\"kvstore\": 1}"));
    CHECK_FALSE(trace_json_output().own("{\"a\": 1, \"kvscope_trace\": 2}"));
    CHECK(steps_csv_output().own("session,step,phase,mode,tokens_processed,forward_calls,pos0\n"));
    CHECK_FALSE(steps_csv_output().own("sessions to plan\n"));
    CHECK(attention_csv_output().own("position,token,1,2,3\n1,a,1,,\n"));
    CHECK_FALSE(attention_csv_output().own("position,token,count\n"));
    CHECK_FALSE(attention_csv_output().own("position,token\n"));
    CHECK_FALSE(trace_events_output().own("{\"traceEvents\":[]}"));
    CHECK_FALSE(gguf_output().own("GGUF\x03"));
    CHECK_FALSE(safetensors_output().own(std::string(8, '\0') + "{\"__metadata__\":{}}"));
    // A kind replaces an empty file, and nothing else when it has no header to know.
    const std::string p = (dir / "f").string();
    write(p, "");
    CHECK_NOTHROW(write_output_file(p, "x", unmarked_output("thing")));
    CHECK_THROWS_WITH(write_output_file(p, "y", unmarked_output("thing")),
                      Catch::Contains("f: already holds something else (kvscope replaces no "
                                      "file with a thing unless it is empty)"));
    CHECK(test::slurp(p) == "x");
}
