#include "core/session/trace_reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

#include "core/files/json_input.h"
#include "core/loaders/memory_budget.h"
#include "core/model/kv_rows.h"
#include "core/model/projection_rows.h"
#include "core/model/replay_model.h"
#include "core/model/toy_model.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/format.h"
#include "core/util/text_file.h"
#include "core/util/utf8.h"

namespace kvs {
namespace {

using nlohmann::json;

// The schema nests 9 deep (twin > steps > step > attention > weights > layer > head > row).
constexpr int kMaxDepth = 16;
constexpr std::size_t kMaxName = 4096;  // a model name, a piece, a device's words
// Values a model's arithmetic fills (logits, rows, weights) may be any float, NaN included: a
// broken model's trace reads back as it was written.
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLo = -kInf, kHi = kInf;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A float field's value: a JSON number, or the text the writer puts for what a JSON number cannot
// hold ("NaN", "Infinity", "-Infinity"; core/util/json_writer.h); nothing else.
std::optional<double> float_of(const json& v) {
    if (v.is_number()) return v.get<double>();
    if (!v.is_string()) return std::nullopt;
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

// Every read names where it is ("steps[3].kv.len") and fails with one line.
class Reader {
  public:
    explicit Reader(std::string source) : source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw Error(source_ + ": " + (where.empty() ? "" : where + ": ") + what);
    }
    const json& member(const json& o, const char* key, const std::string& where) const {
        if (!o.is_object()) fail(where, "not an object");
        const auto it = o.find(key);
        if (it == o.end()) fail(where, std::string("no \"") + key + "\" field");
        return *it;
    }
    const json* optional(const json& o, const char* key) const {
        const auto it = o.find(key);
        return it == o.end() || it->is_null() ? nullptr : &*it;
    }
    std::int64_t integer(const json& v, const std::string& where, std::int64_t lo,
                         std::int64_t hi) const {
        // The value as the file has it (1e+300, 18446744073709551615, "3") and the range.
        const std::string range = " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")";
        if (!v.is_number_integer())
            fail(where, json_excerpt(v, 40) + " is not a whole number" + range);
        if (v.is_number_unsigned() &&
            v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            fail(where, v.dump() + " is out of range" + range);
        const std::int64_t x = v.get<std::int64_t>();
        if (x < lo || x > hi) fail(where, std::to_string(x) + " is out of range" + range);
        return x;
    }
    int whole(const json& o, const char* key, const std::string& where, int lo, int hi) const {
        return static_cast<int>(integer(member(o, key, where), where + "." + key, lo, hi));
    }
    // A number in [lo, hi]; NaN too where `nan` (a value a model's arithmetic gave).
    double number(const json& v, const std::string& where, double lo, double hi,
                  bool nan = false) const {
        const std::optional<double> x = float_of(v);
        if (!x) fail(where, json_excerpt(v, 40) + " is not a number");
        if (!(*x >= lo && *x <= hi) && !(nan && std::isnan(*x)))
            fail(where, json_excerpt(v, 40) + " is out of range (" + range_text(lo) + ".." +
                            range_text(hi) + ")");
        return *x;
    }
    double real(const json& o, const char* key, const std::string& where, double lo, double hi,
                bool nan = false) const {
        return number(member(o, key, where), where + "." + key, lo, hi, nan);
    }
    static std::string range_text(double x) {
        return std::isinf(x) ? (x > 0 ? "Infinity" : "-Infinity") : json(x).dump();
    }
    std::string string(const json& v, const std::string& where, std::size_t max) const {
        if (!v.is_string()) fail(where, "not a string");
        const std::string& s = v.get_ref<const std::string&>();
        if (s.size() > max) fail(where, "longer than " + std::to_string(max) + " bytes");
        return s;
    }
    std::string text(const json& o, const char* key, const std::string& where,
                     std::size_t max = kMaxName) const {
        return string(member(o, key, where), where + "." + key, max);
    }
    // A label the views and the CLI show as it is (a model's name, where and when the run was
    // recorded): kept in its one-line escaped form (core/util/utf8.h), so no display can print
    // a control byte or a reordering character a file put there. Pieces and the text stay bytes.
    std::string label(const json& o, const char* key, const std::string& where) const {
        return escape_for_one_line(text(o, key, where));
    }
    bool boolean(const json& o, const char* key, const std::string& where) const {
        const json& v = member(o, key, where);
        if (!v.is_boolean()) fail(where + "." + key, "not true or false");
        return v.get<bool>();
    }
    const json& array(const json& v, const std::string& where, std::size_t max) const {
        if (!v.is_array()) fail(where, "not an array");
        if (v.size() > max) fail(where, "more than " + std::to_string(max) + " entries");
        return v;
    }
    std::vector<int> ids(const json& v, const std::string& where, std::size_t max,
                         int vocab) const {
        array(v, where, max);
        std::vector<int> out;
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i)
            out.push_back(static_cast<int>(
                integer(v[i], where + "[" + std::to_string(i) + "]", 0, vocab - 1)));
        return out;
    }
    // Exactly `count` numbers in [lo, hi] (or NaN) into `out`, sized only once the file is seen
    // to hold them (a few bytes claiming a shape must not allocate for it); null is `null_as`
    // (older writers put null for every value JSON cannot hold).
    void floats(const json& v, const std::string& where, std::size_t count, std::vector<float>& out,
                float lo = -std::numeric_limits<float>::max(),
                float hi = std::numeric_limits<float>::max(), float null_as = kNaN) const {
        holds(v, where, count);
        out.resize(count);
        fill(v, where, out.data(), lo, hi, null_as);
    }
    // `v` is an array of exactly `count` values: checked before anything is sized from `count`.
    void holds(const json& v, const std::string& where, std::size_t count) const {
        if (!v.is_array() || v.size() != count)
            fail(where, "not an array of " + std::to_string(count) + " numbers");
    }
    // The numbers of `v` (an array holds() has checked) into `out`.
    void fill(const json& v, const std::string& where, float* out, float lo = kLo, float hi = kHi,
              float null_as = kNaN) const {
        for (std::size_t i = 0; i < v.size(); ++i) {
            const json& x = v[i];
            if (x.is_null()) {
                out[i] = null_as;
                continue;
            }
            const std::optional<double> d = float_of(x);
            if (!d) fail(where + "[" + std::to_string(i) + "]", "not a number");
            if (!(*d >= lo && *d <= hi) && !std::isnan(*d))
                fail(where + "[" + std::to_string(i) + "]", "out of range");
            out[i] = static_cast<float>(*d);
        }
    }

  private:
    std::string source_;
};

std::string at(const std::string& where, std::size_t i) {
    return where + "[" + std::to_string(i) + "]";
}

// The model block: shapes checked as a model file's are, and against the toy when it says toy.
struct ModelBlock {
    std::string name, format;
    ModelConfig config;
    bool toy = false;
    std::size_t parameters = 0;
    int bos = -1;
};

ModelBlock read_model(const Reader& rd, const json& m, int version) {
    ModelBlock b;
    const std::string w = "model";
    b.name = rd.label(m, "name", w);
    b.toy = rd.boolean(m, "toy", w);
    ModelConfig& c = b.config;
    c.dim = rd.whole(m, "dim", w, 1, 1 << 14);
    c.hidden_dim = rd.whole(m, "hidden_dim", w, b.toy ? 0 : 1, 1 << 16);  // the toy has no MLP
    c.n_layers = rd.whole(m, "n_layers", w, 1, 256);
    c.n_heads = rd.whole(m, "n_heads", w, 1, 1024);
    c.n_kv_heads = rd.whole(m, "n_kv_heads", w, 1, 1024);
    c.vocab_size = rd.whole(m, "vocab_size", w, 1, 1 << 20);
    c.seq_len = rd.whole(m, "seq_len", w, 1, 1 << 17);
    if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0)
        rd.fail(w, "heads that do not divide the dimension evenly");
    if (rd.whole(m, "head_dim", w, 1, 1 << 14) != c.head_dim())
        rd.fail(w + ".head_dim", "is not dim / n_heads");
    if (version >= 2) {
        const std::string arch = rd.text(m, "architecture", w);
        if (arch == "gpt2")
            c.arch = Architecture::Gpt2;
        else if (arch != "llama")
            rd.fail(w + ".architecture", "'" + arch + "' is not llama or gpt2");
        c.shared_classifier = rd.boolean(m, "shared_classifier", w);
        c.qkv_bias = rd.boolean(m, "qkv_bias", w);
        c.n_positions = rd.whole(m, "n_positions", w, 0, 1 << 17);
        b.format = rd.label(m, "format", w);
        b.parameters = static_cast<std::size_t>(
            rd.integer(rd.member(m, "parameters", w), w + ".parameters", 0, std::int64_t(1) << 50));
        b.bos = rd.whole(m, "bos", w, -1, c.vocab_size - 1);
    }
    if (!b.toy) {
        try {
            c.validate(b.name);
        } catch (const Error& e) {
            const std::string why = e.what();
            const auto colon = why.rfind(": ");
            rd.fail(w, "shapes no model has (" +
                           why.substr(colon == std::string::npos ? 0 : colon + 2) + ")");
        }
    }
    return b;
}

// A step's times: wall and forward, the pass's path, kernel launches, per-op seconds.
void read_time(const Reader& rd, const json& s, const std::string& w, int version, StepRecord& r) {
    const json& time = rd.member(s, "time", w);
    const std::string tw = w + ".time";
    r.wall_seconds = rd.real(time, "wall_s", tw, 0, 1e9);
    r.forward_seconds = rd.real(time, "forward_s", tw, 0, 1e9);
    r.timing_runs = rd.whole(time, "runs", tw, 1, 1000);
    r.forward_min_seconds = rd.real(time, "forward_min_s", tw, 0, 1e9);
    r.forward_max_seconds = rd.real(time, "forward_max_s", tw, 0, 1e9);
    if (rd.optional(time, "timed_in_turn")) r.timed_in_turn = rd.boolean(time, "timed_in_turn", tw);
    if (const json* g = rd.optional(time, "graph_s")) r.graph_seconds = rd.number(*g, tw, 0, 1e9);
    if (const json* f = rd.optional(time, "fused_s")) r.fused_seconds = rd.number(*f, tw, 0, 1e9);
    if (rd.optional(time, "path")) {
        const std::string p = rd.text(time, "path", tw);
        bool known = false;
        for (PassPath q : {PassPath::PerOp, PassPath::Graph, PassPath::Fused})
            if (p == pass_path_name(q)) r.path = q, known = true;
        if (!known) rd.fail(tw + ".path", "not \"op by op\", \"graph\" or \"fused\"");
    }
    const auto launches = [&](const char* key) {
        return rd.optional(time, key) ? rd.whole(time, key, tw, 0, 1 << 30) : 0;
    };
    r.kernel_launches = launches("kernels");
    r.graph_kernel_launches = launches("graph_kernels");
    r.fused_kernel_launches = launches("fused_kernels");
    r.backend = rd.label(time, "backend", tw);
    r.device = rd.label(time, "device", tw);
    const json& ops = rd.member(time, "ops", tw);
    if (!ops.is_object() || ops.size() > kOpCount) rd.fail(tw + ".ops", "not an object of ops");
    const json* calls = version >= 2 ? &rd.member(time, "op_calls", tw) : nullptr;
    for (int i = 0; i < kOpCount; ++i) {
        const char* name = op_name(static_cast<Op>(i));
        const auto it = ops.find(name);
        if (it == ops.end()) continue;
        r.op_times.seconds[i] = rd.number(*it, tw + ".ops." + name, 0, 1e9);
        r.op_times.calls[i] = calls ? rd.whole(*calls, name, tw + ".op_calls", 1, 1 << 30) : 1;
    }
}

// The attention payload: weights (and scores) per layer, head and query row, each row as long
// as the keys it sees. The nesting and every row's length are checked before the rows are sized
// (the file holds every number it claims), and only the toy's rows may be null (no key to
// attend to): a null row stands for a row of zeros, so elsewhere it would let a few bytes claim
// megabytes.
void read_attention(const Reader& rd, const json& a, const std::string& aw, int L, int H, bool toy,
                    StepRecord& r) {
    AttentionRows& ar = r.attention;
    const int rows = rd.whole(a, "rows", aw, 1, r.tokens_processed);
    const int q_pos0 = rd.whole(a, "q_pos0", aw, r.kv.len - rows, r.kv.len - rows);
    const json* every = rd.optional(a, "all_keys");  // bidirectional rows: every key
    const bool all_keys = every && every->is_boolean() && every->get<bool>();
    const json& weights = rd.member(a, "weights", aw);
    const json* scores = rd.optional(a, "scores");
    const auto row_name = [&](int l, int h, int row) {
        return aw + ".weights[" + std::to_string(l) + "][" + std::to_string(h) + "][" +
               std::to_string(row) + "]";
    };
    // weights[l][h][row] (or scores'), once the nesting is seen to be [n_layers][n_heads][rows].
    const auto cell = [&](const json& top, int l, int h, int row) -> const json& {
        return top[std::size_t(l)][std::size_t(h)][std::size_t(row)];
    };
    for (const json* top : {&weights, scores}) {
        if (!top) continue;
        const std::string tw = aw + (top == scores ? ".scores" : ".weights");
        if (!top->is_array() || int(top->size()) != L) rd.fail(tw, "not [n_layers]");
        for (int l = 0; l < L; ++l) {
            const json& lj = (*top)[std::size_t(l)];
            if (!lj.is_array() || int(lj.size()) != H) rd.fail(at(tw, l), "not [n_heads]");
            for (int h = 0; h < H; ++h) {
                const json& hj = lj[std::size_t(h)];
                if (!hj.is_array() || int(hj.size()) != rows)
                    rd.fail(at(tw, l) + "[" + std::to_string(h) + "]", "not [rows]");
                for (int row = 0; row < rows; ++row) {
                    const json& x = hj[std::size_t(row)];
                    if (x.is_null() && top == &weights) {
                        if (!toy) rd.fail(row_name(l, h, row), "null: only the toy's rows are");
                        continue;
                    }
                    rd.holds(x, row_name(l, h, row) + (top == scores ? " (scores)" : ""),
                             all_keys ? std::size_t(q_pos0) + rows : std::size_t(q_pos0) + row + 1);
                }
            }
        }
    }
    ar.resize(L, H, rows, q_pos0, all_keys);
    if (scores) ar.scores.assign(ar.p.size(), 0.0f);
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h)
            for (int row = 0; row < rows; ++row) {
                const std::string rw = row_name(l, h, row);
                const json& wr = cell(weights, l, h, row);
                if (wr.is_null()) {
                    if (ar.empty_row.empty()) ar.empty_row.assign(std::size_t(L) * H * rows, 0);
                    ar.empty_row[(std::size_t(l) * H + h) * rows + row] = 1;
                } else {
                    rd.fill(wr, rw, ar.row(l, h, row).data(), 0.0f, 1.001f);
                }
                if (scores)
                    rd.fill(cell(*scores, l, h, row), rw + " (scores)",
                            ar.scores.data() + ar.row_offset(l, h, row), kLo, kHi,
                            -std::numeric_limits<float>::infinity());
            }
}

// The op log: each op's kind, layer, shapes, FLOPs and seconds.
void read_ops_log(const Reader& rd, const json& ops, const std::string& ow, int L, StepRecord& r) {
    rd.array(ops, ow, std::size_t(1) << 20);
    std::map<std::string, OpKind> kinds;
    for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k)
        kinds.emplace(op_kind_name(static_cast<OpKind>(k)), static_cast<OpKind>(k));
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const json& o = (ops)[i];
        const std::string ew = at(ow, i);
        OpRecord rec;
        const auto kind = kinds.find(rd.text(o, "op", ew));
        if (kind == kinds.end()) rd.fail(ew + ".op", "not an op kvscope logs");
        rec.kind = kind->second;
        rec.layer = rd.whole(o, "layer", ew, -1, L - 1);
        auto shape = [&](const char* key) {
            const json& v = rd.member(o, key, ew);
            if (!v.is_array() || v.size() != 2) rd.fail(ew + "." + key, "not [rows, features]");
            return OpShape{static_cast<int>(rd.integer(v[0], ew + "." + key, 0, 1 << 30)),
                           static_cast<int>(rd.integer(v[1], ew + "." + key, 0, 1 << 30))};
        };
        rec.in = shape("in");
        rec.out = shape("out");
        rec.flops = rd.real(o, "flops", ew, 0, 1e30);
        const json& sec = rd.member(o, "seconds", ew);
        rec.seconds = sec.is_null() ? -1 : rd.number(sec, ew + ".seconds", 0, 1e9);
        if (const json* tw2 = rd.optional(o, "timed_with"))
            rec.timed_with = static_cast<int>(
                rd.integer(*tw2, ew + ".timed_with", 0, static_cast<std::int64_t>(i) - 1));
        if (rec.timed_with >= 0 && r.ops.ops[rec.timed_with].timed_with >= 0)
            rd.fail(ew + ".timed_with", "not an op with a call of its own");
        if (rd.optional(o, "kernel")) {
            rec.kernel = fused_kernel_name(rd.text(o, "kernel", ew));
            if (!rec.kernel) rd.fail(ew + ".kernel", "not a fused kernel kvscope runs");
        }
        r.ops.ops.push_back(rec);
    }
}

// The step's sampling stages (core/session/sampling_stages.h): the settings, the bounded entries
// with a probability at each stage, the mass of the rest; the drawn token is the step's unless
// the session took its twin's.
void read_sampling(const Reader& rd, const json& o, const std::string& w, int V,
                   std::map<int, std::string>& pieces, StepRecord& r) {
    SamplingStages& s = r.sampling;
    s.vocab = V;
    s.greedy = rd.boolean(o, "greedy", w);
    s.temperature = static_cast<float>(rd.real(o, "temperature", w, 0, 1e6));
    s.top_k = rd.whole(o, "top_k", w, 0, 1 << 30);
    s.top_p = static_cast<float>(rd.real(o, "top_p", w, -1e6, 1e6));
    s.kept_top_k = rd.whole(o, "kept_top_k", w, 0, V);
    s.kept_top_p = rd.whole(o, "kept_top_p", w, 0, V);
    s.nucleus_mass = static_cast<float>(rd.real(o, "nucleus_mass", w, 0, 1.001, true));
    const std::string order = rd.text(o, "draw_order", w);
    if (order != "token id" && order != "probability")
        rd.fail(w + ".draw_order", "not \"token id\" or \"probability\"");
    s.draw_by_id = order == "token id";
    const json& coin = rd.member(o, "coin", w);
    s.coin = coin.is_null() ? -1.0f : static_cast<float>(rd.number(coin, w + ".coin", 0, 1));
    s.drawn = rd.whole(o, "drawn", w, -1, V - 1);
    s.forced = rd.boolean(o, "forced", w);
    if (!s.forced && s.drawn >= 0 && s.drawn != r.token_out)
        rd.fail(w + ".drawn", "not the step's token_out, and the token was not forced");
    const json& entries = rd.array(rd.member(o, "entries", w), w + ".entries",
                                   std::size_t(std::min(kMaxSamplingEntries, V)) + 1);
    std::vector<int> seen;  // the ids so far, sorted
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const json& e = entries[i];
        const std::string ew = at(w + ".entries", i);
        SamplingEntry x;
        x.id = rd.whole(e, "id", ew, 0, V - 1);
        const auto it = std::lower_bound(seen.begin(), seen.end(), x.id);
        if (it != seen.end() && *it == x.id) rd.fail(ew + ".id", "listed twice");
        seen.insert(it, x.id);
        pieces.emplace(x.id, rd.text(e, "piece", ew));
        x.logit = static_cast<float>(rd.real(e, "logit", ew, kLo, kHi, true));
        x.scaled_logit = static_cast<float>(rd.real(e, "scaled_logit", ew, kLo, kHi, true));
        x.p = static_cast<float>(rd.real(e, "p", ew, 0, 1.001, true));
        x.p_tempered = static_cast<float>(rd.real(e, "p_tempered", ew, 0, 1.001, true));
        x.p_top_k = static_cast<float>(rd.real(e, "p_top_k", ew, 0, 1.001, true));
        x.p_final = static_cast<float>(rd.real(e, "p_final", ew, 0, 1.001, true));
        x.cdf_from = static_cast<float>(rd.real(e, "cdf_from", ew, 0, 1.001, true));
        s.entries.push_back(x);
    }
    const json& rest = rd.member(o, "rest", w);
    s.rest_p = static_cast<float>(rd.real(rest, "p", w + ".rest", 0, 1.001, true));
    s.rest_tempered = static_cast<float>(rd.real(rest, "p_tempered", w + ".rest", 0, 1.001, true));
    s.rest_top_k = static_cast<float>(rd.real(rest, "p_top_k", w + ".rest", 0, 1.001, true));
    s.rest_final = static_cast<float>(rd.real(rest, "p_final", w + ".rest", 0, 1.001, true));
}

// The kept rows' vectors (q after RoPE, the attention output, where q, k and v came from), each
// [n_layers, rows, ...] of the step's kept rows.
void read_row_vectors(const Reader& rd, const json& s, const std::string& w, const ModelConfig& c,
                      bool toy, std::size_t rows, StepRecord& r) {
    const int L = c.n_layers;
    const json* qr = rd.optional(s, "q_rows");
    const json* ao = rd.optional(s, "attn_out");
    if ((qr != nullptr) != (ao != nullptr)) rd.fail(w, "q_rows without attn_out, or the reverse");
    if (qr) {
        if (toy || rows == 0)
            rd.fail(w + ".q_rows", "only a model's steps with attention have them");
        const std::size_t n = std::size_t(L) * rows * c.dim;
        rd.floats(rd.member(*qr, "values", w + ".q_rows"), w + ".q_rows.values", n, r.q_rows, kLo,
                  kHi, kNaN);
        rd.floats(rd.member(*ao, "values", w + ".attn_out"), w + ".attn_out.values", n, r.attn_out,
                  kLo, kHi, kNaN);
    }
    if (const json* pr = rd.optional(s, "projections")) {
        if (toy || rows == 0)
            rd.fail(w + ".projections", "only a model's steps with attention have them");
        rd.floats(rd.member(*pr, "values", w + ".projections"), w + ".projections.values",
                  ConstProjectionRows{nullptr, L, int(rows), c.dim, c.kv_dim()}.size(),
                  r.projections, kLo, kHi, kNaN);
    }
}

// One step, checked against the model's shapes and the steps before it (`before`: the cache
// length after the previous step, or 0).
StepRecord read_step(const Reader& rd, const json& s, const std::string& w, int index,
                     const ModelConfig& c, int before, bool toy, int version,
                     std::map<int, std::string>& pieces) {
    StepRecord r;
    const int V = c.vocab_size, L = c.n_layers, H = c.n_heads, kv_dim = c.kv_dim();
    r.index = rd.whole(s, "index", w, index, index);
    const std::string phase = rd.text(s, "phase", w);
    if (phase != "prefill" && phase != "decode") rd.fail(w + ".phase", "not prefill or decode");
    r.phase = phase == "prefill" ? Phase::Prefill : Phase::Decode;
    if ((index == 0) != (r.phase == Phase::Prefill))
        rd.fail(w + ".phase", "the prefill is step 0 and only step 0");
    const std::string mode = rd.text(s, "mode", w);
    if (mode != "cached" && mode != "uncached") rd.fail(w + ".mode", "not cached or uncached");
    r.mode = mode == "cached" ? CacheMode::Cached : CacheMode::Uncached;
    // Without the mask (a trace of the bidirectional view); absent in older traces: causal.
    if (const json* mk = rd.optional(s, "mask")) {
        const std::string v = mk->is_string() ? mk->get<std::string>() : "";
        if (v != "causal" && v != "bidirectional")
            rd.fail(w + ".mask", "not causal or bidirectional");
        r.mask = v == "causal" ? AttentionMask::Causal : AttentionMask::Bidirectional;
    }
    r.new_tokens = rd.ids(rd.member(s, "new_tokens", w), w + ".new_tokens", c.seq_len, V);
    if (r.new_tokens.empty() || (index > 0 && r.new_tokens.size() != 1))
        rd.fail(w + ".new_tokens", "a prefill adds the prompt, a decode step one token");
    r.pos0 = rd.whole(s, "pos0", w, 0, c.seq_len);
    r.tokens_processed = rd.whole(s, "tokens_processed", w, 1, c.seq_len);
    r.forward_calls = rd.whole(s, "forward_calls", w, 1, c.seq_len);
    r.token_out = rd.whole(s, "token_out", w, 0, V - 1);
    pieces.emplace(r.token_out, rd.text(s, "token_out_piece", w));
    const json& coin = rd.member(s, "coin", w);
    r.coin = coin.is_null() ? -1.0f : static_cast<float>(rd.number(coin, w + ".coin", 0, 1));
    const json& top = rd.array(rd.member(s, "top", w), w + ".top", std::size_t(V));
    for (std::size_t i = 0; i < top.size(); ++i) {
        const std::string tw = at(w + ".top", i);
        TopToken t;
        t.id = rd.whole(top[i], "id", tw, 0, V - 1);
        t.prob = static_cast<float>(rd.real(top[i], "prob", tw, 0, 1, true));
        t.logit = static_cast<float>(rd.real(top[i], "logit", tw, kLo, kHi, true));
        pieces.emplace(t.id, rd.text(top[i], "piece", tw));
        r.top.push_back(t);
    }
    if (const json* sm = rd.optional(s, "sampling"))
        read_sampling(rd, *sm, w + ".sampling", V, pieces, r);

    // The cache after the step: the model's shapes, grown by the tokens that joined.
    const json& kv = rd.member(s, "kv", w);
    const std::string kw = w + ".kv";
    r.kv.n_layers = rd.whole(kv, "n_layers", kw, L, L);
    r.kv.n_kv_heads = rd.whole(kv, "n_kv_heads", kw, c.n_kv_heads, c.n_kv_heads);
    r.kv.head_dim = rd.whole(kv, "head_dim", kw, c.head_dim(), c.head_dim());
    r.kv.capacity = rd.whole(kv, "capacity", kw, 1, c.seq_len);
    const int grown = before + static_cast<int>(r.new_tokens.size());
    r.kv.len = rd.whole(kv, "len", kw, grown, grown);
    if (r.kv.len > r.kv.capacity) rd.fail(kw, "more rows than the cache holds");
    if (r.pos0 + r.tokens_processed != r.kv.len)
        rd.fail(w, "pos0 + tokens_processed is not the cache's length after the step");
    const double bytes = rd.real(kv, "bytes", kw, 0, 1e18);
    const double per_value = bytes / (double(r.kv.bytes_per_token()) / 4 * r.kv.len);
    r.kv.bytes_per_value = per_value == 2 ? 2 : 4;
    if (per_value != 2 && per_value != 4) rd.fail(kw + ".bytes", "not 2 or 4 bytes a value");

    read_time(rd, s, w, version, r);

    const json& counts = rd.member(s, "counts", w);
    const std::string cw = w + ".counts";
    r.counts.flops = rd.real(counts, "flops", cw, 0, 1e30);
    r.counts.matmul_flops = rd.real(counts, "matmul_flops", cw, 0, 1e30);
    r.counts.attention_flops = rd.real(counts, "attention_flops", cw, 0, 1e30);
    r.counts.bytes = rd.real(counts, "bytes", cw, 0, 1e30);
    // The bytes apart, as recorded; a trace written before they were: K/V counted from the
    // step's shapes (float32 rows), the weights the rest of the recorded bytes.
    if (rd.optional(counts, "weight_bytes")) {
        r.counts.weight_bytes = rd.real(counts, "weight_bytes", cw, 0, 1e30);
        r.counts.kv_read_bytes = rd.real(counts, "kv_read_bytes", cw, 0, 1e30);
        r.counts.kv_write_bytes = rd.real(counts, "kv_write_bytes", cw, 0, 1e30);
        // Written with 9 significant digits: equal to that precision.
        const double sum = r.counts.weight_bytes + r.counts.kv_read_bytes + r.counts.kv_write_bytes;
        if (std::fabs(sum - r.counts.bytes) > 1e-6 * std::max(1.0, r.counts.bytes))
            rd.fail(cw, "weight_bytes + kv_read_bytes + kv_write_bytes is not bytes");
    } else {
        const StepCounts shapes = count_llama_forward(c, r.pos0, r.tokens_processed);
        r.counts.kv_read_bytes = shapes.kv_read_bytes;
        r.counts.kv_write_bytes = shapes.kv_write_bytes;
        r.counts.weight_bytes =
            std::max(0.0, r.counts.bytes - shapes.kv_read_bytes - shapes.kv_write_bytes);
    }
    const json& q = rd.member(s, "why_not_q", w);
    const std::string qw = w + ".why_not_q";
    r.query_rows_computed = rd.whole(q, "query_rows_computed", qw, 0, 1 << 30);
    r.query_rows_used = rd.whole(q, "query_rows_used", qw, 0, 1 << 30);
    r.kv_rows_written = rd.whole(q, "kv_rows_written", qw, 0, 1 << 30);
    r.kv_rows_recomputed = rd.whole(q, "kv_rows_recomputed", qw, 0, 1 << 30);
    const json& delta = rd.member(q, "kv_recomputed_max_delta", qw);
    r.kv_recomputed_max_delta =
        delta.is_null() ? -1 : rd.number(delta, qw + ".kv_recomputed_max_delta", 0, kHi, true);
    for (auto [key, out] :
         {std::pair{"kv_delta_k", &r.kv_delta_k}, std::pair{"kv_delta_v", &r.kv_delta_v}})
        if (const json* d = rd.optional(q, key)) {
            if (!d->is_array() || (!d->empty() && int(d->size()) != L))
                rd.fail(qw + "." + key, "not [] or [n_layers]");
            std::vector<float> v;
            rd.floats(*d, qw + "." + key, d->size(), v, 0.0f, kHi);
            out->assign(v.begin(), v.end());
        }
    r.payload_evicted = rd.boolean(s, "payload_evicted", w);

    // Payloads: every shape is the model's, every row inside the cache after the step.
    if (const json* a = rd.optional(s, "attention"))
        read_attention(rd, *a, w + ".attention", L, H, toy, r);
    const std::size_t rows = static_cast<std::size_t>(r.attention.rows);
    if (const json* h = rd.optional(s, "head_outputs")) {
        if (!toy || rows == 0)
            rd.fail(w + ".head_outputs", "only the toy's steps with attention have them");
        rd.floats(*h, w + ".head_outputs", std::size_t(L) * H * rows, r.head_outputs, kLo, kHi,
                  kNaN);
    }
    read_row_vectors(rd, s, w, c, toy, rows, r);
    if (const json* ops_log = rd.optional(s, "ops")) read_ops_log(rd, *ops_log, w + ".ops", L, r);
    if (const json* lg = rd.optional(s, "logits")) {
        rd.floats(*lg, w + ".logits", std::size_t(V), r.logits, kLo, kHi, kNaN);
    }
    if (const json* kr = rd.optional(s, "kv_rows")) {
        const std::string kw2 = w + ".kv_rows";
        r.kv_rows_kept = rd.whole(*kr, "rows", kw2, 1, r.kv.len);
        rd.floats(rd.member(*kr, "values", kw2), kw2 + ".values",
                  ConstKvRows{nullptr, L, r.kv_rows_kept, kv_dim}.size(), r.kv_rows, kLo, kHi,
                  kNaN);
    }
    const bool has_payload = !r.attention.p.empty() || !r.logits.empty() || !r.kv_rows.empty() ||
                             !r.ops.ops.empty() || !r.q_rows.empty() || !r.projections.empty();
    if (r.payload_evicted && has_payload) rd.fail(w, "payload_evicted, yet a payload is there");
    return r;
}

RecordedSession read_session(const Reader& rd, const json& o, const std::string& w,
                             const ModelConfig& c, bool toy, int version,
                             std::map<int, std::string>& pieces) {
    RecordedSession s;
    const std::string mode = rd.text(o, "mode", w);
    if (mode != "cached" && mode != "uncached") rd.fail(w + ".mode", "not cached or uncached");
    s.mode = mode == "cached" ? CacheMode::Cached : CacheMode::Uncached;
    const std::vector<int> prompt =
        rd.ids(rd.member(o, "prompt_tokens", w), w + ".prompt_tokens", c.seq_len, c.vocab_size);
    s.prompt_len = static_cast<int>(prompt.size());
    s.tokens =
        rd.ids(rd.member(o, "tokens", w), w + ".tokens", std::size_t(c.seq_len) + 1, c.vocab_size);
    if (s.tokens.size() < prompt.size() ||
        !std::equal(prompt.begin(), prompt.end(), s.tokens.begin()))
        rd.fail(w + ".tokens", "does not start with the prompt");
    const json& tp =
        rd.array(rd.member(o, "token_pieces", w), w + ".token_pieces", s.tokens.size());
    if (tp.size() != s.tokens.size()) rd.fail(w + ".token_pieces", "not one piece per token");
    for (std::size_t i = 0; i < tp.size(); ++i)
        pieces.emplace(s.tokens[i], rd.string(tp[i], at(w + ".token_pieces", i), kMaxName));
    s.text = rd.text(o, "text", w, std::size_t(1) << 30);
    const std::string why = rd.text(o, "finish_reason", w);
    s.finish = FinishReason::None;
    for (FinishReason f :
         {FinishReason::EndToken, FinishReason::ContextFull, FinishReason::LengthLimit})
        if (why == finish_reason_name(f)) s.finish = f;
    if (s.finish == FinishReason::None && !why.empty() && why != "running")
        rd.fail(w + ".finish_reason", "'" + why + "' is not a reason kvscope stops for");

    const json& steps = rd.array(rd.member(o, "steps", w), w + ".steps", std::size_t(c.seq_len));
    s.trace.reserve(steps.size());
    int before = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        StepRecord r = read_step(rd, steps[k], at(w + ".steps", k), static_cast<int>(k), c, before,
                                 toy, version, pieces);
        // The tokens each step fed are the session's: the prompt, then each step's choice.
        const auto first = s.tokens.begin() + before;
        if (r.new_tokens.size() > s.tokens.size() - before ||
            !std::equal(r.new_tokens.begin(), r.new_tokens.end(), first))
            rd.fail(at(w + ".steps", k) + ".new_tokens", "not the session's tokens");
        if (k == 0 && static_cast<int>(r.new_tokens.size()) != s.prompt_len)
            rd.fail(at(w + ".steps", k) + ".new_tokens", "not the prompt");
        if (std::size_t(s.prompt_len) + k >= s.tokens.size() ||
            s.tokens[s.prompt_len + k] != r.token_out)
            rd.fail(at(w + ".steps", k) + ".token_out", "not the session's token");
        before = r.kv.len;
        s.trace.push(std::move(r));
    }
    if (s.tokens.size() != std::size_t(s.prompt_len) + steps.size())
        rd.fail(w + ".tokens", "not the prompt and one token a step");
    // The recorded budget, never below what was read: a replay drops nothing it was given.
    const json& mem = rd.member(o, "trace_memory", w);
    const std::int64_t budget =
        rd.integer(rd.member(mem, "budget_bytes", w + ".trace_memory"),
                   w + ".trace_memory.budget_bytes", -1, std::numeric_limits<std::int64_t>::max());
    if (budget > 0 && std::uint64_t(budget) <= SIZE_MAX)
        s.trace.set_budget(std::max(static_cast<std::size_t>(budget), s.trace.payload_bytes()));
    return s;
}

}  // namespace

std::uint64_t max_trace_bytes() {
    const std::uint64_t hard = std::uint64_t(sizeof(void*) >= 8 ? 4096 : 256) << 20;
    const MemoryBudget host = host_memory_budget();
    return host.bytes > 0 ? std::min(hard, host.bytes / 3) : hard;
}

namespace {

// The parsed document, checked field by field (read_trace_json has bounded its size and depth).
RecordedRun read_document(const Reader& rd, const json& doc) {
    const auto version_it = doc.find("kvscope_trace");
    if (version_it == doc.end()) rd.fail("", "not a kvscope trace (no kvscope_trace field)");
    if (!version_it->is_number_integer() || version_it->get<std::int64_t>() < 1)
        rd.fail("kvscope_trace", "not a trace version");
    RecordedRun run;
    run.version =
        static_cast<int>(std::min<std::int64_t>(version_it->get<std::int64_t>(), 1 << 30));
    if (run.version > kTraceJsonVersion)
        rd.fail("", "a trace of version " + std::to_string(run.version) +
                        ", newer than this kvscope reads (" + std::to_string(kTraceJsonVersion) +
                        " and older): open it with the kvscope that wrote it");

    const ModelBlock mb = read_model(rd, rd.member(doc, "model", ""), run.version);
    if (mb.toy) {
        auto toy = std::make_shared<ToyModel>();
        const ModelConfig& t = toy->config();
        const ModelConfig& c = mb.config;
        if (c.dim != t.dim || c.n_layers != t.n_layers || c.n_heads != t.n_heads ||
            c.n_kv_heads != t.n_kv_heads || c.vocab_size != t.vocab_size || c.seq_len != t.seq_len)
            rd.fail("model", "says toy, with shapes that are not the toy's");
        run.model = toy;
    }
    const ModelConfig& c = run.model ? run.model->config() : mb.config;

    const json& sampler = rd.member(doc, "sampler", "");
    run.sampler.temperature =
        static_cast<float>(rd.real(sampler, "temperature", "sampler", 0, 1e6));
    run.sampler.top_k = rd.whole(sampler, "top_k", "sampler", 0, 1 << 30);
    run.sampler.top_p = static_cast<float>(rd.real(sampler, "top_p", "sampler", -1e6, 1e6));
    run.sampler.seed = static_cast<std::uint64_t>(rd.integer(
        rd.member(sampler, "seed", "sampler"), "sampler.seed",
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()));

    std::map<int, std::string> pieces;
    run.sessions.push_back(read_session(rd, doc, "", c, mb.toy, run.version, pieces));
    if (const json* twin = rd.optional(doc, "twin")) {
        run.sessions.push_back(read_session(rd, *twin, "twin", c, mb.toy, run.version, pieces));
        const RecordedSession &a = run.sessions[0], &b = run.sessions[1];
        if (a.prompt_len != b.prompt_len ||
            !std::equal(a.tokens.begin(), a.tokens.begin() + a.prompt_len, b.tokens.begin()))
            rd.fail("twin", "not the same prompt as the session it is compared with");
        const json& diffs = rd.array(rd.member(doc, "logit_max_diff", ""), "logit_max_diff",
                                     a.trace.steps().size());
        for (std::size_t i = 0; i < diffs.size(); ++i)
            run.logit_max_diff.push_back(
                diffs[i].is_null() ? std::numeric_limits<double>::quiet_NaN()
                                   : rd.number(diffs[i], at("logit_max_diff", i), 0, kHi, true));
    }

    if (run.version >= 2) {
        const json& r = rd.member(doc, "recorded", "");
        RecordedOn& on = run.recorded;
        on.program = rd.label(r, "program", "recorded");
        on.version = rd.label(r, "version", "recorded");
        on.date = rd.label(r, "date", "recorded");
        on.backend = rd.label(r, "backend", "recorded");
        on.device = rd.label(r, "device", "recorded");
        on.host = rd.label(r, "host", "recorded");
        on.timing_runs = rd.whole(r, "timing_runs", "recorded", 1, 1000);
    } else if (!run.sessions[0].trace.empty()) {
        // Version 1 said where each step was timed, not where the run was recorded.
        run.recorded.backend = run.sessions[0].trace.back().backend;
        run.recorded.device = run.sessions[0].trace.back().device;
        run.recorded.timing_runs = run.sessions[0].trace.back().timing_runs;
    }

    if (!run.model) {
        int bos = mb.bos;
        // Version 1 did not say which token is BOS: llama2.c's tokenizer names it "<s>".
        if (run.version < 2 && !run.sessions[0].tokens.empty()) {
            const std::string& p = pieces[run.sessions[0].tokens[0]];
            if (p == "<s>" || p == "\n<s>\n") bos = run.sessions[0].tokens[0];
        }
        run.model = std::make_shared<ReplayModel>(
            mb.name, mb.config, RecordedTokenizer(mb.config.vocab_size, std::move(pieces), bos),
            mb.format, mb.parameters);
    }
    return run;
}

}  // namespace

namespace {

// The text's bytes for nlohmann's parser, telling `progress` every MiB how far it has read.
class CountingIterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    CountingIterator(const char* p, std::string_view text, const ByteProgress* progress)
        : at_(p), text_(text), progress_(progress) {}
    reference operator*() const { return *at_; }
    CountingIterator& operator++() {
        ++at_;
        const auto done = static_cast<std::uint64_t>(at_ - text_.data());
        if ((done & 0xFFFFF) == 0) (*progress_)(done, text_.size());
        return *this;
    }
    bool operator==(const CountingIterator& o) const { return at_ == o.at_; }
    bool operator!=(const CountingIterator& o) const { return at_ != o.at_; }

  private:
    const char* at_;  // the byte the parser reads next
    std::string_view text_;
    const ByteProgress* progress_;
};

}  // namespace

RecordedRun read_trace_json(std::string_view whole, const std::string& source,
                            const ByteProgress& progress) {
    const Reader rd(source);
    const std::string_view text = utf8_text(whole, source);
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{')
        rd.fail("", "not a kvscope trace (a trace JSON is one object)");
    json_text(whole, source);  // no NUL byte (junk after one would not be read)
    if (json_too_deep_at(text, kMaxDepth) != std::string_view::npos)
        rd.fail("",
                "nested deeper than a kvscope trace (" + std::to_string(kMaxDepth) + " levels)");
    json doc;
    try {
        if (progress) {
            const char* end = text.data() + text.size();
            doc = json::parse(CountingIterator(text.data(), text, &progress),
                              CountingIterator(end, text, &progress), DuplicateKeyCheck(source));
            progress(text.size(), text.size());
        } else {
            doc = json::parse(text.begin(), text.end(), DuplicateKeyCheck(source));
        }
    } catch (const json::exception& e) {  // a syntax error, or a number beyond a double's range
        rd.fail("", json_syntax_problem(whole, e, whole.size() - text.size()));
    }
    try {
        return read_document(rd, doc);
    } catch (const json::exception&) {  // a value of a type the reader did not check for
        rd.fail("", "a value of a type kvscope does not read there");
    }
}

RecordedRun read_trace_file(const std::string& path, const ByteProgress& progress) {
    const std::uintmax_t size = regular_file_size(path);
    const std::uint64_t limit = max_trace_bytes();
    if (size > limit)
        throw Error(path + ": a trace of " + format_bytes(double(size)) +
                    " is more than kvscope reads here (" + format_bytes(double(limit)) +
                    ": a third of the memory available, at most 4 GiB)");
    const std::vector<unsigned char> bytes = read_file_bytes(path, static_cast<std::size_t>(limit));
    return read_trace_json(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path,
        progress);
}

bool looks_like_trace(const std::string& path) {
    std::vector<unsigned char> head;
    try {
        head = read_file_head(path, 256);
    } catch (const Error&) {
        return false;
    }
    const std::string_view s =
        without_bom(std::string_view(reinterpret_cast<const char*>(head.data()), head.size()));
    const auto first = s.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && s[first] == '{' &&
           s.find("\"kvscope_trace\"") != std::string_view::npos;
}

TraceJsonRun RecordedRun::view() const {
    TraceJsonRun v;
    v.model = model.get();
    v.sampler = sampler;
    v.recorded = recorded;
    for (const RecordedSession& s : sessions) {
        TraceJsonSession t;
        t.mode = s.mode;
        t.tokens = s.tokens;
        t.prompt_len = s.prompt_len;
        t.text = s.text;
        t.finish = s.finish;
        t.trace = &s.trace;
        v.sessions.push_back(t);
    }
    v.logit_max_diff = logit_max_diff;
    return v;
}

}  // namespace kvs
