// kvscope-cli kernels: every op at the model's shapes on every implementation this build has (the
// plain CPU reference, the fast CPU backend, the CUDA kernels emulated on the CPU, the CUDA
// backend when a device answers), each checked against the reference and timed. The first command
// to run on a GPU, and a table a lesson can show. Inputs are deterministic pseudo-random values of
// the model's shapes (the weights' values do not change an op's time or its agreement).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_stats.h"
#include "cli/commands.h"
#include "core/loaders/model_loader.h"
#include "core/util/error.h"
#include "core/util/utf8.h"
#include "kernels/backend_factory.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/reference_ops.h"
#include "kernels/emu/emulated_cuda_backend.h"
#include "kernels/relative_difference.h"

namespace kvs::cli {
namespace {

// One op at one shape: its buffers (inputs filled, buffer 0 the output that is checked) and how
// to run it on host arrays (the reference) or on a backend.
struct OpCase {
    Op family;  // which kernel runs it, with T rows: its block-size variants (kern::block_variants)
    int rows;
    std::string op, shape;
    std::vector<std::size_t> sizes;
    std::function<void(std::vector<float*>&)> reference;
    std::function<void(Backend&, std::vector<DeviceSpan>&)> run;
};

// Values in [-1, 1], the same for every implementation (a hash of the index, not a generator:
// each buffer differs by `salt`).
std::vector<float> inputs(std::size_t n, unsigned salt) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.7f * static_cast<float>(i) + salt);
    return v;
}

std::vector<OpCase> op_cases(const ModelConfig& c, int keys, int prefill_rows) {
    const int dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim(), kv = c.kv_dim();
    const int nh = c.n_heads, nkv = c.n_kv_heads, T = prefill_rows;
    std::vector<OpCase> cases;
    auto sz = [](long long a, long long b = 1) { return static_cast<std::size_t>(a * b); };
    cases.push_back(
        {Op::RmsNorm,
         1,
         "rmsnorm",
         "1 x " + std::to_string(dim),
         {sz(dim), sz(dim), sz(dim)},
         [=](std::vector<float*>& b) { ref::rmsnorm(b[0], b[1], b[2], 1, dim, c.norm_eps); },
         [=](Backend& be, std::vector<DeviceSpan>& b) {
             be.rmsnorm(b[0], b[1], b[2], 1, dim, c.norm_eps);
         }});
    // GPT-2's norm, at the same shape; listed for every model, as the kernels are in every build.
    cases.push_back({Op::LayerNorm,
                     1,
                     "layernorm",
                     "1 x " + std::to_string(dim),
                     {sz(dim), sz(dim), sz(dim), sz(dim)},
                     [=](std::vector<float*>& b) {
                         ref::layernorm(b[0], b[1], b[2], b[3], 1, dim, c.norm_eps);
                     },
                     [=](Backend& be, std::vector<DeviceSpan>& b) {
                         be.layernorm(b[0], b[1], b[2], b[3], 1, dim, c.norm_eps);
                     }});
    struct Mm {
        const char* what;
        int rows, n, d;
    };
    for (const Mm& m : {Mm{"decode q", 1, dim, dim}, Mm{"decode w1", 1, dim, hidden},
                        Mm{"decode w2", 1, hidden, dim}, Mm{"decode logits", 1, dim, c.vocab_size},
                        Mm{"prefill w1", T, dim, hidden}})
        cases.push_back(
            {Op::Matmul,
             m.rows,
             std::string("matmul ") + m.what,
             std::to_string(m.rows) + " x " + std::to_string(m.n) + " -> " + std::to_string(m.d),
             {sz(m.rows, m.d), sz(m.rows, m.n), sz(m.d, m.n)},
             [=](std::vector<float*>& b) { ref::matmul(b[0], b[1], b[2], m.rows, m.n, m.d); },
             [=](Backend& be, std::vector<DeviceSpan>& b) {
                 be.matmul(b[0], b[1], b[2], m.rows, m.n, m.d);
             }});
    struct Att {
        const char* what;
        int rows, pos0;
    };
    for (const Att& a : {Att{"decode", 1, keys - 1}, Att{"prefill", T, 0}}) {
        const int n_keys = a.pos0 + a.rows;
        cases.push_back({Op::Attention,
                         a.rows,
                         std::string("attention ") + a.what,
                         std::to_string(a.rows) + " queries x " + std::to_string(n_keys) +
                             " keys, " + std::to_string(nh) + "/" + std::to_string(nkv) + " heads",
                         {sz(a.rows, dim), sz(a.rows, dim), sz(n_keys, kv), sz(n_keys, kv)},
                         [=](std::vector<float*>& b) {
                             ref::attention(b[0], b[1], b[2], b[3], nullptr, a.rows, a.pos0, nh,
                                            nkv, hd);
                         },
                         [=](Backend& be, std::vector<DeviceSpan>& b) {
                             be.attention(b[0], b[1], b[2], b[3], DeviceSpan{}, a.rows, a.pos0, nh,
                                          nkv, hd, true);
                         }});
    }
    cases.push_back(
        {Op::SwiGLU,
         1,
         "swiglu",
         std::to_string(hidden),
         {sz(hidden), sz(hidden)},
         [=](std::vector<float*>& b) { ref::swiglu(b[0], b[1], sz(hidden)); },
         [=](Backend& be, std::vector<DeviceSpan>& b) { be.swiglu(b[0], b[1], sz(hidden)); }});
    // GPT-2's activation, over the MLP's hidden width as swiglu (in place: buffer 0 is both).
    cases.push_back({Op::Gelu,
                     1,
                     "gelu",
                     std::to_string(hidden),
                     {sz(hidden)},
                     [=](std::vector<float*>& b) { ref::gelu(b[0], sz(hidden)); },
                     [=](Backend& be, std::vector<DeviceSpan>& b) { be.gelu(b[0], sz(hidden)); }});
    return cases;
}

std::vector<std::vector<float>> fresh_buffers(const OpCase& oc) {
    std::vector<std::vector<float>> b;
    for (std::size_t i = 0; i < oc.sizes.size(); ++i) b.push_back(inputs(oc.sizes[i], unsigned(i)));
    return b;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Result {
    std::vector<float> out;
    Spread time;     // seconds, wall clock around the call and synchronize()
    Spread op_time;  // seconds by the backend's own op clock (CUDA events on a GPU); 0: none
};

// The reference on host arrays: `repeats` runs from the same inputs, each timed.
Result run_reference(const OpCase& oc, int repeats) {
    Result r;
    std::vector<double> times;
    for (int k = 0; k < repeats; ++k) {
        auto bufs = fresh_buffers(oc);
        std::vector<float*> p;
        for (auto& b : bufs) p.push_back(b.data());
        const auto t0 = std::chrono::steady_clock::now();
        oc.reference(p);
        times.push_back(seconds_since(t0));
        r.out = bufs[0];
    }
    r.time = spread(times);
    return r;
}

// On a backend: inputs uploaded once per run, one warm-up run, then `repeats` runs each timed from
// the launch to the end of synchronize() (wall clock: on a GPU, launch and wait included).
Result run_backend(const OpCase& oc, Backend& be, int repeats) {
    Result r;
    std::vector<double> times;
    std::vector<DeviceBuffer> bufs;
    std::vector<DeviceSpan> spans;
    for (std::size_t s : oc.sizes) {
        bufs.emplace_back(be, s);
        spans.push_back(bufs.back().span());
    }
    be.set_record_calls(true);
    for (int k = -1; k < repeats; ++k) {
        if (k == 0) be.reset_op_times();  // the warm-up run's times are not kept
        const auto host = fresh_buffers(oc);
        for (std::size_t i = 0; i < host.size(); ++i)
            be.upload(spans[i], host[i].data(), host[i].size());
        be.synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        oc.run(be, spans);
        be.synchronize();
        if (k >= 0) times.push_back(seconds_since(t0));
    }
    std::vector<double> op_times;
    for (const OpCall& c : be.op_calls())
        if (c.op != Op::Transfer) op_times.push_back(c.seconds);
    be.set_record_calls(false);
    r.out.resize(oc.sizes[0]);
    be.download(r.out.data(), spans[0], r.out.size());
    r.time = spread(times);
    if (!op_times.empty()) r.op_time = spread(op_times);
    return r;
}

}  // namespace

std::vector<OptionSpec> kernels_options() {
    // Every implementation runs, so no --backend; the ops run on float32 at the model's shapes,
    // so no --weights; --keys, not --context, sets the length.
    std::vector<OptionSpec> specs;
    for (const OptionSpec& o : model_options())
        if (o.name != "backend" && o.name != "weights" && o.name != "context" && o.name != "gemm")
            specs.push_back(o);
    specs.insert(
        specs.end(),
        {OptionSpec{.name = "repeats",
                    .value_name = "N",
                    .help = "timed runs per op and implementation; the median is shown (default 5)",
                    .value = cmdline::whole_in(1, 1000)},
         OptionSpec{.name = "keys",
                    .value_name = "K",
                    .help = "cached keys of the decode attention (default: the whole context)",
                    .value = cmdline::whole_in(1, 1 << 20)},
         {"require-gpu", "",
          "fail (exit 2) unless a CUDA device runs the cuda rows (also\nKVSCOPE_REQUIRE_GPU=1): a "
          "GPU check that ran nothing must not pass"}});
    return specs;
}

int cmd_kernels(int argc, char** argv) {
    const Args a = model_args("kernels", kernels_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Run each op at the model's shapes on every implementation this build has (CPU "
            "reference, CPU, CUDA emulated, CUDA when a device answers), check it against "
            "the reference and time it.\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    const int repeats = a.integer("repeats", 5);
    auto model = open_model(a.str("model", "default"), a.str("tokenizer"));
    const ModelConfig& c = model->config();
    const int keys = a.integer_within("keys", c.seq_len, 1, c.seq_len, "the model's context");
    const int prefill_rows = std::min(16, c.seq_len);

    struct Impl {
        std::string name;
        std::unique_ptr<Backend> backend;  // null: the reference
    };
    std::vector<Impl> impls;
    impls.push_back({"cpu-reference", nullptr});
    impls.push_back({"cpu", make_backend("cpu", threads_from(a)).backend});
    impls.push_back({"cuda-emulated", std::make_unique<EmulatedCudaBackend>()});
    const std::string no_cuda =
        cuda_compiled() ? cuda_unavailable_reason() : "this build has no CUDA backend";
    const char* require = std::getenv("KVSCOPE_REQUIRE_GPU");
    if (!no_cuda.empty() && (a.has("require-gpu") || (require && std::string(require) == "1")))
        throw Error("kernels: no CUDA device runs the cuda rows (" + escape_for_one_line(no_cuda) +
                    "), and a device was required");
    if (no_cuda.empty()) impls.push_back({"cuda", make_backend("cuda").backend});

    std::printf(
        "kernels: %s; times are the median of %d runs: wall clock from the call to the end of "
        "synchronize, and each backend's own op clock; agreement is max |x - ref| / max |ref|\n",
        escape_for_one_line(model->name()).c_str(), repeats);
    if (!no_cuda.empty()) std::printf("cuda: not run (%s)\n", escape_for_one_line(no_cuda).c_str());
    std::printf(
        "CUDA rows: one per block size of the kernel, where it can take others "
        "(kernels/cuda/launch_shapes.h; * the size the backend launches)\n");
    for (const Impl& im : impls)
        if (im.backend)
            std::printf("%s: op clock = %s\n", im.name.c_str(),
                        escape_for_one_line(im.backend->device()).c_str());
    std::printf("%-22s %-34s %-14s %-22s %10s %12s %12s %s\n", "op", "shape", "implementation",
                "block", "median us", "op clock us", "vs ref", "");
    bool all_ok = true;
    for (const OpCase& oc : op_cases(c, keys, prefill_rows)) {
        const Result ref = run_reference(oc, repeats);
        for (const Impl& im : impls) {
            // A CUDA backend runs each block-size variant of the op's kernel; the rest run once.
            std::vector<kern::BlockVariant> variants;
            if (im.backend && set_block_sizes(*im.backend, kern::BlockSizes{}))
                variants = kern::block_variants(oc.family, oc.rows);
            if (variants.empty()) variants.push_back({"-", kern::BlockSizes{}});
            for (const kern::BlockVariant& v : variants) {
                if (im.backend) set_block_sizes(*im.backend, v.sizes);
                const Result r = im.backend ? run_backend(oc, *im.backend, repeats) : ref;
                if (im.backend) set_block_sizes(*im.backend, kern::BlockSizes{});
                const double d = relative_difference(r.out, ref.out);
                const bool ok = d <= 1e-4;
                all_ok = all_ok && ok;
                char op_clock[32] = "-";
                if (im.backend)
                    std::snprintf(op_clock, sizeof op_clock, "%.1f", r.op_time.median * 1e6);
                std::printf("%-22s %-34s %-14s %-22s %10.1f %12s %12.2e %s\n", oc.op.c_str(),
                            oc.shape.c_str(), im.name.c_str(), v.name.c_str(), r.time.median * 1e6,
                            op_clock, d,
                            !im.backend ? "(the reference)"
                            : ok        ? "ok"
                                        : "DIFFERS (> 1e-4)");
            }
        }
    }
    return all_ok ? 0 : 1;
}

}  // namespace kvs::cli
