#include "core/session/trace_csv.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/model/model.h"
#include "core/session/attention_matrix.h"
#include "core/util/error.h"
#include "core/util/utf8.h"

namespace kvs {
namespace {

std::string num(double v) {
    if (!std::isfinite(v)) return "NA";
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

}  // namespace

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

void write_attention_csv(std::ostream& os, std::span<const StepRecord> steps, int step, int layer,
                         int head, const Tokenizer& tok) {
    if (step < 0 || step >= static_cast<int>(steps.size()))
        throw Error("step " + std::to_string(step) + " is not in the trace (it has " +
                    std::to_string(steps.size()) + " steps, from 0)");
    const AttentionMatrixRows m = collect_attention_rows(steps, step);
    if (m.n_layers == 0)
        throw Error("the trace kept no attention up to step " + std::to_string(step));
    if (layer < 0 || layer >= m.n_layers || head < 0 || head >= m.n_heads)
        throw Error("layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                    " is not in the trace (" + std::to_string(m.n_layers) + " layers, " +
                    std::to_string(m.n_heads) + " heads, from 0)");
    // The token at each position: the prompt (step 0), then one a step.
    std::vector<int> token;
    for (int k = 0; k <= step; ++k)
        token.insert(token.end(), steps[k].new_tokens.begin(), steps[k].new_tokens.end());
    os << "position,token";
    for (int k = 0; k < m.n; ++k) os << ',' << k + 1;
    os << '\n';
    for (int q = 0; q < m.n; ++q) {
        os << q + 1 << ','
           << csv_field(escape_for_one_line(q < int(token.size()) ? tok.piece(token[q]) : ""));
        for (int k = 0; k < m.n; ++k) {
            const CellValue c = attention_cell(m, layer, head, q, k);
            os << ',';
            if (c.kind == CellKind::Weight)
                os << num(c.weight);
            else if (c.kind != CellKind::Masked)
                os << "NA";
        }
        os << '\n';
    }
}

// The steps CSV's first columns: its header line starts so whatever columns follow.
constexpr char kStepsStart[] = "session,step,phase,mode,tokens_processed,forward_calls,";

OutputKind steps_csv_output() {
    return output_starting("steps CSV", kStepsStart);
}

// "position,token,1,2,..,n" and a newline, n >= 1.
OutputKind attention_csv_output() {
    return {"attention CSV", [](std::string_view head) {
                constexpr std::string_view start = "position,token";
                if (!head.starts_with(start)) return false;
                std::size_t at = start.size();
                for (int k = 1;; ++k) {
                    if (at >= head.size()) return k > 1;  // a header longer than what was read
                    std::string col(1, ',');
                    col += std::to_string(k);
                    if (head.substr(at, col.size()) != col)
                        return k > 1 && head.substr(at, 1) == "\n";
                    at += col.size();
                }
            }};
}

void write_steps_csv(std::ostream& os, const TraceJsonRun& run) {
    const Tokenizer& tok = run.model->tokenizer();
    os << kStepsStart
       << "pos0,kv_len,kv_bytes,token_out,"
          "token_piece,wall_ms,forward_ms,forward_min_ms,forward_max_ms,timing_runs,graph_ms,"
          "flops,matmul_flops,attention_flops,bytes,kv_rows_written,kv_rows_recomputed,backend,"
          "device,logit_max_diff\n";
    for (std::size_t s = 0; s < run.sessions.size(); ++s) {
        for (const StepRecord& r : run.sessions[s].trace->steps()) {
            const bool diff = run.sessions.size() > 1 && r.index < int(run.logit_max_diff.size());
            os << s << ',' << r.index << ',' << phase_name(r.phase) << ',' << mode_name(r.mode)
               << ',' << r.tokens_processed << ',' << r.forward_calls << ',' << r.pos0 << ','
               << r.kv.len << ',' << r.kv.bytes() << ',' << r.token_out << ','
               << csv_field(escape_for_one_line(tok.piece(r.token_out))) << ','
               << num(r.wall_seconds * 1e3) << ',' << num(r.forward_seconds * 1e3) << ','
               << num(r.forward_min_seconds * 1e3) << ',' << num(r.forward_max_seconds * 1e3) << ','
               << r.timing_runs << ',' << (r.graph_seconds > 0 ? num(r.graph_seconds * 1e3) : "")
               << ',' << num(r.counts.flops) << ',' << num(r.counts.matmul_flops) << ','
               << num(r.counts.attention_flops) << ',' << num(r.counts.bytes) << ','
               << r.kv_rows_written << ',' << r.kv_rows_recomputed << ','
               << csv_field(escape_for_one_line(r.backend)) << ','
               << csv_field(escape_for_one_line(r.device)) << ','
               << (diff ? num(run.logit_max_diff[r.index]) : "") << '\n';
        }
    }
}

}  // namespace kvs
