// kvscope-cli bench: prefill and decode throughput by length, with and without the KV cache,
// measured through Session (bench_runs.h), with min/median/max over repeats, counted FLOPs and
// bytes beside the measured times, a per-op breakdown, the fitted growth of total cost with
// length, what tracing and per-op timing themselves cost, and (CPU) the fast ops against the
// plain reference loops on the same machine.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <utility>

#include "cli/bench_plan.h"
#include "cli/bench_stats.h"
#include "cli/bench_weights.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/loaders/model_loader.h"
#include "core/model/compact_weights.h"
#include "core/model/transformer_model.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/machine_limits.h"
#include "kernels/cpu/quant_dot.h"

namespace kvs::cli {
namespace {

// What the machine is and how busy it was: benchmark numbers mean little without it.
std::string cpu_model_name() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "unknown CPU";
}

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    if (!(f >> a >> b >> c)) return "n/a";
    return a + " " + b + " " + c;
}

struct CsvRow {
    std::string length, measure, metric, unit;
    Spread s;
    int n = 0;
};

// The default output fits a terminal 100 columns wide; --wide prints every column.
constexpr std::size_t kColumns = 100;

// `text` in lines of at most `width` columns (at spaces), continuation lines indented by two;
// as it is when `width` is 0.
void print_wrapped(const std::string& text, std::size_t width) {
    if (const auto nl = text.find('\n'); nl != std::string::npos && width > 0) {
        print_wrapped(text.substr(0, nl), width);  // each line of its own
        print_wrapped(text.substr(nl + 1), width);
        return;
    }
    if (width == 0 || text.size() <= width) {
        std::printf("%s\n", text.c_str());
        return;
    }
    std::size_t at = 0;
    std::string indent;
    while (at < text.size()) {
        const std::size_t room = width - indent.size();
        std::size_t end = text.size();
        if (end - at > room) {
            end = text.rfind(' ', at + room);
            if (end == std::string::npos || end <= at) end = std::min(text.size(), at + room);
        }
        std::printf("%s%s\n", indent.c_str(), text.substr(at, end - at).c_str());
        at = end;
        while (at < text.size() && text[at] == ' ') ++at;
        indent = "  ";
    }
}

// printf into print_wrapped.
template <class... A>
void printw(std::size_t width, const char* fmt, A... args) {
    char b[2048];
    std::snprintf(b, sizeof b, fmt, args...);
    std::string text = b;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    print_wrapped(text, width);
}

void print_table_header(bool wide) {
    if (wide)
        std::printf("%5s  %-23s %10s %10s %10s  %10s  %13s %9s %8s %8s %7s\n", "L", "measure",
                    "tok/s min", "median", "max", "median ms", "latency ms", "GFLOP", "GFLOP/s",
                    "MB", "GB/s");
    else
        std::printf("%5s  %-23s %10s %10s  %13s %8s %7s\n", "L", "measure", "tok/s", "median ms",
                    "latency ms", "GFLOP/s", "GB/s");
}

void print_cell(const Cell& c, bool wide) {
    const Spread r = c.rate(), t = c.seconds(), g = c.gflops();
    const bool pre = is_prefill(c.measure);
    const double latency = pre ? c.first_token().median : c.per_token().median;
    if (wide)
        std::printf("%5d  %-23s %10.1f %10.1f %10.1f  %10.3f  %8.4f %-4s %9.4f %8.2f %8.3f %7.2f\n",
                    c.length, measure_name(c.measure), r.min, r.median, r.max, t.median * 1e3,
                    latency * 1e3, pre ? "TTFT" : "TPOT", c.counts().flops / 1e9, g.median,
                    c.counts().bytes / 1e6, c.gbytes().median);
    else
        std::printf("%5d  %-23s %10.1f %10.3f  %8.4f %-4s %8.2f %7.2f\n", c.length,
                    measure_name(c.measure), r.median, t.median * 1e3, latency * 1e3,
                    pre ? "TTFT" : "TPOT", g.median, c.gbytes().median);
}

void print_ops(const std::vector<Cell>& cells, bool wide) {
    print_wrapped(
        "\nper-op time (median over repeats, ms; measured by the backend inside the forward "
        "passes; 'other' = forward time not inside an op" +
            std::string(wide ? ")"
                             : "; 'norms' = rmsnorm and layernorm, 'rest' = every other op; "
                               "--wide: each op)"),
        wide ? 0 : kColumns);
    const int matmul_i = static_cast<int>(Op::Matmul),
              attention_i = static_cast<int>(Op::Attention);
    auto is_norm = [](int i) {
        return i == static_cast<int>(Op::RmsNorm) || i == static_cast<int>(Op::LayerNorm);
    };
    std::printf("%5s  %-23s", "L", "measure");
    if (wide)
        for (int i = 0; i < kOpCount; ++i) std::printf(" %9s", op_name(static_cast<Op>(i)));
    else
        std::printf(" %9s %9s %9s %9s", "matmul", "attention", "norms", "rest");
    std::printf(" %9s %8s\n", "other", "matmul%");
    for (const Cell& c : cells) {
        std::printf("%5d  %-23s", c.length, measure_name(c.measure));
        double ops = 0, norms = 0, rest = 0;
        for (int i = 0; i < kOpCount; ++i) {
            const double ms = c.op(i).median * 1e3;
            ops += ms;
            if (wide) std::printf(" %9.3f", ms);
            if (is_norm(i))
                norms += ms;
            else if (i != matmul_i && i != attention_i)
                rest += ms;
        }
        const double matmul = c.op(matmul_i).median * 1e3;
        if (!wide)
            std::printf(" %9.3f %9.3f %9.3f %9.3f", matmul, c.op(attention_i).median * 1e3, norms,
                        rest);
        const double forward =
            spread(c.each([](const RunSample& r) { return r.forward_s; })).median * 1e3;
        std::printf(" %9.3f %7.1f%%\n", std::max(0.0, forward - ops),
                    forward > 0 ? 100 * matmul / forward : 0.0);
    }
}

void add_csv(std::vector<CsvRow>& rows, const Cell& c) {
    const std::string L = std::to_string(c.length), m = measure_name(c.measure);
    const int n = static_cast<int>(c.runs.size());
    auto add = [&](const char* metric, const char* unit, Spread s) {
        rows.push_back({L, m, metric, unit, s, n});
    };
    add("tokens_per_s", "tok/s", c.rate());
    add("seconds", "s", c.seconds());
    add("total_seconds", "s", c.total());
    if (is_prefill(c.measure))
        add("time_to_first_token", "s", c.first_token());
    else
        add("time_per_output_token", "s", c.per_token());
    add("achieved_gflops", "GFLOP/s", c.gflops());
    add("achieved_gbytes", "GB/s", c.gbytes());
    const StepCounts& k = c.counts();
    add("counted_flops", "FLOP", {k.flops, k.flops, k.flops});
    add("counted_bytes", "B", {k.bytes, k.bytes, k.bytes});
    for (int i = 0; i < kOpCount; ++i) {
        const std::string metric = std::string("op_") + op_name(static_cast<Op>(i));
        rows.push_back({L, m, metric, "s", c.op(i), n});
    }
}

// A bench CSV starts with its first comment line's words, byte for byte.
OutputKind bench_csv_output() {
    return output_starting("bench CSV", "# kvscope-cli bench: ");
}

void write_csv(const std::string& path, const std::vector<std::string>& header,
               const std::vector<CsvRow>& rows) {
    std::string f;
    for (const auto& h : header) f += "# " + h + "\n";
    f += "length,measure,metric,unit,min,median,max,repeats\n";
    char buf[256];
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%.9g,%.9g,%.9g,%d\n", r.length.c_str(),
                      r.measure.c_str(), r.metric.c_str(), r.unit.c_str(), r.s.min, r.s.median,
                      r.s.max, r.n);
        f += buf;
    }
    write_output_file(path, f, bench_csv_output());
}

// Bytes as "12.3 MB" (10^6), or kB below a megabyte.
std::string format_mb(std::uint64_t bytes) {
    char buf[48];
    if (bytes >= 1000000)
        std::snprintf(buf, sizeof buf, "%.2f MB", bytes / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
    return buf;
}

// Median of a before over median of b, as "x.xx" (how many times longer a takes).
double ratio(const Spread& a, const Spread& b) {
    return b.median > 0 ? a.median / b.median : 0;
}

// bench --limits: the ceilings every other figure is a fraction of.
int print_limits(int threads, int repeats) {
    const std::string path = cpu::simd_path_summary();  // a bad KVSCOPE_ISA stops before any output
    std::printf("kvscope-cli bench --limits: machine %s, %u logical CPUs; load average %s\n",
                cpu_model_name().c_str(), std::thread::hardware_concurrency(),
                load_average().c_str());
    std::printf(
        "best and median of %d runs each, per wall-clock second and per second of the threads' "
        "own CPU time (the ceiling when other processes share the cores)\n",
        repeats);
    std::printf("CPU SIMD path: %s\n", path.c_str());
    std::vector<int> counts = {1};
    if (threads > 1) counts.push_back(threads);
    for (int t : counts) {
        const cpu::MachineLimits m = cpu::measure_machine_limits(t, repeats);
        std::printf("%d thread%s (probes compiled for the %s path)\n", t, t == 1 ? "" : "s",
                    m.vector_isa.c_str());
        const auto line = [](const char* what, const char* unit, const cpu::Limit& wall,
                             const cpu::Limit& cpu_time) {
            std::printf(
                "  %-44s best %7.1f, median %7.1f %s per wall second; best %7.1f, "
                "median %7.1f per CPU second\n",
                what, wall.best, wall.median, unit, cpu_time.best, cpu_time.median);
        };
        line("FMA peak, 8-float vectors:", "GFLOP/s", m.fma_8, m.fma_8_cpu);
        line("FMA peak, 16-float vectors:", "GFLOP/s", m.fma_16, m.fma_16_cpu);
        const std::string bw = "read bandwidth (" + std::to_string(int(m.buffer_bytes / 1048576)) +
                               " MiB, read-only stream):";
        line(bw.c_str(), "GB/s", m.read_bw, m.read_bw_cpu);
    }
    std::printf("load average at end: %s\n", load_average().c_str());
    return 0;
}

// What the report's parts share: every cell measured so far, the CSV rows they add, the width
// lines wrap at (0: --wide, no wrapping).
struct Report {
    std::vector<Cell> cells;
    std::vector<CsvRow> csv;
    bool wide = false;
    std::size_t width = kColumns;
    const Cell* find(Measure meas, int L) const {
        for (const Cell& c : cells)
            if (c.measure == meas && c.length == L) return &c;
        return nullptr;
    }
};

// The lines above the table (and atop the CSV): what was measured, on what, how busy it was.
std::vector<std::string> bench_header(const Model& m, const Opened& o, const Bench& bench,
                                      const std::string& prompt, bool trace, int warmup,
                                      int repeats) {
    Backend& be = *o.backend.backend;
    const auto* cpu = dynamic_cast<const CpuBackend*>(&be);
    const auto* llama = dynamic_cast<const TransformerModel*>(&m);
    std::vector<std::string> header;
    header.push_back("kvscope-cli bench: model " + m.name() + " (" + m.config().describe() + ")");
    header.push_back("backend " + be.name() + " on " + be.device() + " (" + o.backend.note + ")");
    if (cpu && !cpu->reference_ops())
        header.push_back("CPU SIMD path: " + cpu::simd_path_summary());
    header.push_back("machine: " + cpu_model_name() + ", " +
                     std::to_string(std::thread::hardware_concurrency()) + " logical CPUs");
    const CompactWeights none;
    const CompactWeights& kept = llama ? llama->compact() : none;
    const bool compact = kept.held();
    const std::uint64_t weight_bytes = weight_bytes_per_token(m.config(), kept);
    header.push_back(
        "weights: " +
        (compact ? "matrices kept " + kept.types() + ", embedding table " +
                       (kept.embedding.data ? ggml_type_name(kept.embedding.type) : "F32") +
                       ", norms F32"
                 : std::string("float32")) +
        "; " + format_mb(weight_bytes) +
        " of weights read per decode token (counted from shapes; the table's MB and GB/s count "
        "every weight in the type it is kept in, core/model/counts.h)");
    if (cpu && !cpu->reference_ops() && compact)
        header.push_back("quantised weights' dot products: " + cpu::dot_path_summary());
    header.push_back("load average at start: " + load_average());
    header.push_back(std::string("tracing ") +
                     (trace ? "ON (attention, K/V rows, logits kept)" : "off") + "; warm-up " +
                     std::to_string(warmup) + ", repeats " + std::to_string(repeats));
    header.push_back(
        "length L: prefill = a prompt of L tokens (the prompt text repeated), timed to the "
        "first new token; decode = L new tokens after the " +
        std::to_string(bench.decode_prompt_len()) + "-token prompt \"" + prompt +
        "\": 1 from the prefill, L-1 decode steps (the rate counts those); no stop at the "
        "end token");
    return header;
}

// The table: every measure at each length, interleaved, a row as each length is done; then what
// did not fit the context.
void measure_lengths(Bench& bench, const std::vector<int>& lengths, bool trace, int context,
                     ProgressLine& progress, Report& r) {
    std::vector<std::string> skipped;
    for (int L : lengths) {
        std::vector<Bench::Job> jobs;
        for (Measure meas : kMeasures) {
            if (bench.fits(meas, L))
                jobs.push_back({meas, {trace, true}});
            else
                skipped.push_back(std::string(measure_name(meas)) + " at L=" + std::to_string(L));
        }
        const std::vector<Cell> done = bench.interleaved(L, jobs);
        progress.clear();
        for (const Cell& c : done) {
            r.cells.push_back(c);
            print_cell(c, r.wide);
            add_csv(r.csv, c);
        }
        std::fflush(stdout);
    }
    if (r.cells.empty()) throw Error("no length fits the model's context");
    if (!skipped.empty()) {
        std::string line = "not run (beyond the context of " + std::to_string(context) + "):";
        for (const auto& sk : skipped) line += " " + sk + ";";
        print_wrapped(line, r.width);
    }
}

// Batched prefill against token by token, cached decode against uncached, length by length.
void print_speedups(const Report& r, const std::vector<int>& lengths) {
    char part[64];
    std::string line =
        "\nbatched prefill vs token by token (per-token speed-up, ratio of median rates):";
    for (int L : lengths)
        if (auto* b = r.find(Measure::PrefillBatched, L), *t = r.find(Measure::PrefillByToken, L);
            b && t) {
            std::snprintf(part, sizeof part, " L=%d %.2fx;", L, ratio(b->rate(), t->rate()));
            line += part;
        }
    print_wrapped(line, r.width);
    line = "cached vs uncached decode (ratio of median decode times):";
    for (int L : lengths)
        if (auto* c = r.find(Measure::DecodeCached, L), *u = r.find(Measure::DecodeUncached, L);
            c && u) {
            std::snprintf(part, sizeof part, " L=%d %.1fx;", L, ratio(u->seconds(), c->seconds()));
            line += part;
        }
    print_wrapped(line, r.width);
}

// Growth of the whole generation's cost with L: time ~ L^k, k by least squares on logs.
void print_growth(Report& r) {
    print_wrapped(
        "\ngrowth of total generation time with L (least squares on log time vs log L; "
        "expect ~1 cached, ~2 uncached):",
        r.width);
    for (Measure meas : {Measure::DecodeCached, Measure::DecodeUncached}) {
        std::vector<double> xs, ys;
        for (const Cell& c : r.cells)
            if (c.measure == meas) {
                xs.push_back(c.length);
                ys.push_back(c.total().median);
            }
        if (xs.size() < 2) {
            std::printf("  %s: fewer than two lengths, no fit\n", measure_name(meas));
            continue;
        }
        const PowerFit f = fit_power(xs, ys);
        printw(r.width, "  %s: time ~ L^%.2f (r^2 %.3f, %d lengths %g..%g)\n", measure_name(meas),
               f.exponent, f.r2, f.points, xs.front(), xs.back());
        r.csv.push_back({"all",
                         measure_name(meas),
                         "growth_exponent",
                         "",
                         {f.exponent, f.exponent, f.exponent},
                         f.points});
        r.csv.push_back(
            {"all", measure_name(meas), "growth_fit_r2", "", {f.r2, f.r2, f.r2}, f.points});
    }
}

// On the CPU with float32 weights: what per-op timing costs, and the fast ops against the plain
// loops in run.c's order (kernels/cpu/reference_ops.h) on the same machine, the same moments,
// the same Session; cached decode at `longest`, in alternating runs.
void print_cpu_costs(Bench& bench, int longest, bool trace, int repeats, ProgressLine& progress,
                     Report& r) {
    const auto timers = bench.interleaved(
        longest, {{Measure::DecodeCached, {trace, true}}, {Measure::DecodeCached, {trace, false}}});
    progress.clear();
    const Cell &timed = timers[0], &untimed = timers[1];
    const double op_cost = ratio(timed.seconds(), untimed.seconds()) - 1;
    int calls = 0;
    for (int c : timed.runs.front().ops.calls) calls += c;
    const double per_call =
        (timed.seconds().median - untimed.seconds().median) / std::max(calls, 1);
    printw(r.width,
           "per-op timing cost, cached decode L=%d (alternating runs): median %.3f "
           "ms with op timers, %.3f ms without: %+.1f%% (%.0f ns per op call, %d "
           "calls)\n",
           longest, timed.seconds().median * 1e3, untimed.seconds().median * 1e3, 100 * op_cost,
           per_call * 1e9, calls);
    r.csv.push_back({std::to_string(longest),
                     "decode_cached",
                     "op_timing_cost_fraction",
                     "",
                     {op_cost, op_cost, op_cost},
                     repeats});

    const auto vs = bench.interleaved(longest, {{Measure::DecodeCached, {trace, true, false}},
                                                {Measure::DecodeCached, {trace, true, true}}});
    progress.clear();
    const double speedup = ratio(vs[1].seconds(), vs[0].seconds());
    printw(r.width,
           "fast CPU ops vs the plain run.c-order ops, cached decode L=%d (alternating "
           "runs): median %.1f tok/s vs %.1f tok/s: %.2fx\n",
           longest, vs[0].rate().median, vs[1].rate().median, speedup);
    r.csv.push_back({std::to_string(longest), "decode_cached_reference_ops", "tokens_per_s",
                     "tok/s", vs[1].rate(), repeats});
    r.csv.push_back({std::to_string(longest),
                     "decode_cached",
                     "speedup_over_reference_ops",
                     "",
                     {speedup, speedup, speedup},
                     repeats});
}

// What the instruments cost: tracing (payload capture) and per-op timing, each measured on the
// longest cached decode, with and without, in alternating runs.
void print_instrument_costs(Bench& bench, bool on_cpu, bool compact, bool trace, int repeats,
                            ProgressLine& progress, Report& r) {
    int longest = 0;
    for (const Cell& c : r.cells)
        if (c.measure == Measure::DecodeCached) longest = c.length;
    if (longest == 0) return;
    const auto paired = bench.interleaved(
        longest, {{Measure::DecodeCached, {true, true}}, {Measure::DecodeCached, {false, true}}});
    progress.clear();
    const Cell &with = paired[0], &without = paired[1];
    const double cost = ratio(with.seconds(), without.seconds()) - 1;
    printw(r.width,
           "\ntracing cost, cached decode L=%d (alternating runs): median %.3f ms with "
           "tracing, %.3f ms without: %+.1f%%\n",
           longest, with.seconds().median * 1e3, without.seconds().median * 1e3, 100 * cost);
    r.csv.push_back({std::to_string(longest),
                     "decode_cached",
                     "tracing_cost_fraction",
                     "",
                     {cost, cost, cost},
                     repeats});
    if (on_cpu && compact)
        printw(r.width,
               "per-op timing cost and fast vs plain ops: measured with float32 weights only "
               "(the plain loops would dequantise every matrix at every step)\n");
    else if (on_cpu)
        print_cpu_costs(bench, longest, trace, repeats, progress, r);
}

// Accuracy beside the speed of compact weights: the same file with float32 matrices, the same
// tokens.
void print_weights_gap(const Model& m, const Model& f32, Backend& be, const Bench& bench, int steps,
                       Report& r) {
    const auto* llama = dynamic_cast<const TransformerModel*>(&m);
    const WeightsGap gap = measure_weights_gap(m, f32, be, bench.decode_prompt(), steps);
    printw(
        r.width,
        "\n%s weights against float32 (the same file; both fed float32's greedy tokens, "
        "%d forward passes: the %d-token prompt, then one token each):\n"
        "  max |logit difference| %.3g; next token (argmax) the same for the first %d of "
        "%d%s\n  weights read per decode token: %s against %s in float32 (%.2fx fewer "
        "bytes; counted from shapes)\n",
        llama->compact().types().c_str(), gap.steps, bench.decode_prompt_len(), gap.max_logit_diff,
        gap.same_greedy, gap.steps, gap.diverged ? "" : " (all: the greedy text is unchanged)",
        format_mb(gap.bytes_per_token).c_str(), format_mb(gap.f32_bytes_per_token).c_str(),
        double(gap.f32_bytes_per_token) / double(std::max<std::uint64_t>(1, gap.bytes_per_token)));
    const double n = gap.steps, same = gap.same_greedy, diff = gap.max_logit_diff;
    const double bytes = double(gap.bytes_per_token);
    r.csv.push_back(
        {"all", "weights", "max_logit_difference_vs_f32", "", {diff, diff, diff}, gap.steps});
    r.csv.push_back({"all", "weights", "same_greedy_steps", "", {same, same, same}, gap.steps});
    r.csv.push_back({"all", "weights", "compared_steps", "", {n, n, n}, gap.steps});
    r.csv.push_back({"all", "weights", "weight_bytes_per_token", "B", {bytes, bytes, bytes}, 1});
}

}  // namespace

std::vector<OptionSpec> bench_options() {
    auto specs = model_options();
    specs.insert(
        specs.end(),
        {OptionSpec{.name = "lengths",
                    .value_name = "L1,L2,..",
                    .help = "lengths to measure (default 32,64,128,256,512, those within\nthe "
                            "context)",
                    .value = cmdline::whole_list_in(1, 1 << 20)},
         OptionSpec{.name = "repeats",
                    .value_name = "R",
                    .help = "timed runs per measurement (default 5)",
                    .value = cmdline::whole_in(1, 1000)},
         OptionSpec{.name = "warmup",
                    .value_name = "W",
                    .help = "untimed runs before them (default 1)",
                    .value = cmdline::whole_in(0, 1000)},
         prompt_option("decode prompt; prefill prompts repeat it (default "
                       "\"Once upon a time\")"),
         cmdline::file_option(),
         {"csv", "FILE", "write every figure as CSV"},
         {"limits", "",
          "measure this machine's FMA peak and read bandwidth (1 thread, then "
          "--threads), print them and exit"},
         {"trace", "", "measure with tracing on (attention, K/V rows, logits kept)"},
         {"wide", "",
          "every column: tok/s min and max, counted GFLOP and MB, each op\n(about 160 "
          "columns; the default fits 100)"}});
    return specs;
}

int cmd_bench(int argc, char** argv) {
    const Args a = model_args("bench", bench_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Measure prefill and decode throughput by length, with and without the KV "
            "cache, through the same Session the GUI uses.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    std::vector<int> lengths = a.int_list("lengths", {32, 64, 128, 256, 512});
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    const int repeats = a.integer("repeats", 5);
    const int warmup = a.integer("warmup", 1);
    const bool trace = a.has("trace");
    const std::string prompt = cmdline::prompt_from(a).value_or("Once upon a time");

    if (a.has("limits")) return print_limits(threads_from(a), repeats);

    Opened o = open_from(a);
    // A bad --csv fails now, not after minutes of measuring (the model is an input by now).
    if (a.has("csv")) check_output_path(a.str("csv"), bench_csv_output());
    Backend& be = *o.backend.backend;
    const bool on_cpu = dynamic_cast<CpuBackend*>(&be) != nullptr;
    const Model& m = *o.model;
    const auto* llama = dynamic_cast<const TransformerModel*>(&m);
    const bool compact = llama && llama->compact().held();
    Bench bench(m, be, prompt, repeats, warmup);
    if (!a.has("lengths")) {
        // The default lengths a run of every measure fits in the model's context: the default
        // model's 256 tokens leave out 512 rather than half-running it.
        std::vector<int> within;
        for (int L : lengths)
            if (std::all_of(std::begin(kMeasures), std::end(kMeasures),
                            [&](Measure meas) { return bench.fits(meas, L); }))
                within.push_back(L);
        if (!within.empty()) lengths = within;
    }
    Report r;
    r.wide = a.has("wide");
    r.width = r.wide ? 0 : kColumns;
    // What it is measuring, once it has run for a second; a line every 5 s in a log.
    ProgressLine progress("kvscope-cli bench", {.after_s = 1.0, .piped_every_s = 5.0});
    bench.set_progress([&](int L, Measure meas, int run, int total) {
        if (!progress.due()) return;
        progress.show("L=" + std::to_string(L) + " " + measure_name(meas) + ", run " +
                      std::to_string(std::min(run, total)) + " of " + std::to_string(total));
    });

    std::vector<std::string> header = bench_header(m, o, bench, prompt, trace, warmup, repeats);
    for (const auto& h : header) print_wrapped(h, r.width);
    print_wrapped(
        "rates: tokens / wall time of the timed steps (median of the repeats; --wide: min and "
        "max too); GFLOP/s and GB/s: counted FLOPs and bytes / forward time",
        r.width);
    std::printf("\n");
    print_table_header(r.wide);
    measure_lengths(bench, lengths, trace, m.config().seq_len, progress, r);
    print_ops(r.cells, r.wide);
    print_speedups(r, lengths);
    print_growth(r);
    print_instrument_costs(bench, on_cpu, compact, trace, repeats, progress, r);
    if (compact) {
        const auto f32 = open_model(a.str("model", "default"), a.str("tokenizer"), GgmlType::F32);
        print_weights_gap(m, *f32, be, bench, std::min(128, lengths.back()), r);
    }
    header.push_back("load average at end: " + load_average());
    std::printf("\n%s\n", header.back().c_str());
    if (a.has("csv")) {
        write_csv(a.str("csv"), header, r.csv);
        std::printf("wrote %s\n", a.str("csv").c_str());
    }
    return 0;
}

}  // namespace kvs::cli
