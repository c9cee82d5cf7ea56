// The op strip: every op of the step shown, in the order it ran (StepRecord::ops,
// core/model/op_log.h): the op, its layer, input and output shapes [rows, features], FLOPs counted
// from those shapes and the time the backend measured for its call. At decode a projection has 1
// row (matrix · vector), at prefill T rows (matrix · matrix). "," and "." walk the ops one at a
// time; the inside-attention panel follows the highlighted op's layer. A step that ran the fast
// path (the op strip closed) lists each op under the fused kernel it ran in.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "core/util/format.h"
#include "gui/draw/text.h"
#include "gui/panels/op_strip.h"
#include "gui/state/strings.h"
#include "gui/views/engine_words.h"

namespace kvs::gui {
namespace {

const SessionView* strip_session(const FrameContext& f, const ExplainUi& x) {
    if (f.snap.sessions.empty()) return nullptr;
    const int si = std::clamp(x.session, 0, int(f.snap.sessions.size()) - 1);
    return &f.snap.sessions[si];
}

const StepRecord* strip_step(const FrameContext& f, const ExplainUi& x) {
    const SessionView* sv = strip_session(f, x);
    if (!sv) return nullptr;
    const int s = shown_step(*sv, f.step);
    return s < 0 ? nullptr : &sv->trace.steps()[s];
}

std::string shape_text(const OpShape& s) {
    char b[48];
    std::snprintf(b, sizeof b, "[%d, %d]", s.rows, s.features);
    return b;
}

// A cell's text, cut short with ".." where the column is narrower.
void cell(const std::string& text, ImU32 col = 0) {
    ImGui::TableNextColumn();
    if (col) ImGui::PushStyleColor(ImGuiCol_Text, col);
    ImGui::TextUnformatted(clipped(text, ImGui::GetContentRegionAvail().x).c_str());
    if (col) ImGui::PopStyleColor();
}

// How the backend timed each op, in the window's words (none for the host's clock).
const char* op_timing_words(OpTiming t) {
    switch (t) {
        case OpTiming::EventsHeldStream:
            return tr(
                "times: CUDA events between the kernels, the stream held until the step's "
                "ops were queued, then released: the device's own time");
        case OpTiming::EventsAroundLaunches:
            return tr(
                "times: CUDA events around each launch (they include the host's issue time "
                "when launches are slower than the kernels)");
        case OpTiming::Emulator:
            return tr("times: the emulator's wall clock (the CPU running the kernels, not a GPU)");
        case OpTiming::HostClock:
            break;
    }
    return nullptr;
}

}  // namespace

void walk_ops(FrameContext& f, ExplainUi& x, int delta) {
    x.op_strip = true;
    const StepRecord* st = strip_step(f, x);
    if (!st || st->ops.ops.empty()) return;
    const int n = static_cast<int>(st->ops.ops.size());
    x.op = x.op < 0 ? (delta > 0 ? 0 : n - 1) : std::clamp(x.op + delta, 0, n - 1);
}

void draw_op_strip(FrameContext& f, OpStripPanel& panel, ExplainUi& x) {
    const StepRecord* st = strip_step(f, x);
    if (!st) {
        ImGui::TextUnformatted(tr("The ops of a step appear here after the prefill."));
        return;
    }
    const std::vector<OpRecord>& ops = st->ops.ops;
    if (ops.empty()) {
        ImGui::TextUnformatted(
            tr("This model's steps have no op log (the toy's heads follow rules, not these ops)."));
        return;
    }
    x.op = std::min(x.op, static_cast<int>(ops.size()) - 1);
    double measured = 0;
    for (const OpRecord& o : ops)
        if (o.seconds > 0) measured += o.seconds;
    char head[320];
    std::snprintf(head, sizeof head,
                  tr("step %d (%s, %s): %d ops, %s counted, %s measured (sum of the ops' own "
                     "times);  , and . walk the ops"),
                  st->index, st->phase == Phase::Prefill ? tr("prefill") : tr("decode"),
                  st->mode == CacheMode::Cached ? tr("with KV cache") : tr("without KV cache"),
                  static_cast<int>(ops.size()), format_flops(st->ops.flops()).c_str(),
                  format_seconds(measured).c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped("%s", head);
    // How the step ran its kernels, and how the times were taken.
    if (st->path == PassPath::Fused)
        ImGui::TextWrapped(tr("this step ran fused: %d kernels, each op listed in the kernel it "
                              "ran in; with the strip open the next steps run op by op, every op "
                              "timed"),
                           st->ops.fused_kernels());
    else if (st->path == PassPath::Graph)
        ImGui::TextWrapped("%s", tr("this step ran as one CUDA graph: no time per op; with the "
                                    "strip open the next steps run op by op, every op timed"));
    else if (const char* how = op_timing_words(st->op_timing))
        ImGui::TextWrapped("%s", how);
    ImGui::PopStyleColor();
    // A newly highlighted op (the keys, --op): the inside-attention panel and the heatmap
    // follow its layer.
    if (x.op >= 0 && x.op != panel.followed) {
        panel.followed = x.op;
        if (ops[x.op].layer >= 0) {
            x.layer = ops[x.op].layer;
            f.ui.settings.layer = ops[x.op].layer;
        }
    }
    if (f.layout && x.op >= 0) {
        f.layout->explain.op = x.op;
        f.layout->explain.op_layer = ops[x.op].layer;
    }
    // Columns share the width; where it is too narrow for their headers (a laptop at text 2)
    // the headers are the short words, and a cell's text is cut short.
    const bool narrow = ImGui::GetContentRegionAvail().x < f.font_px * 50;
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("ops", 7, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#", 0, 0.5f);
    ImGui::TableSetupColumn(tr("op"), 0, 2.0f);
    ImGui::TableSetupColumn(tr("layer"), 0, 0.7f);
    ImGui::TableSetupColumn(narrow ? tr("input") : tr("input [rows, features]"), 0, 2.0f);
    ImGui::TableSetupColumn(narrow ? tr("output") : tr("output [rows, features]"), 0, 2.0f);
    ImGui::TableSetupColumn(narrow ? tr("FLOPs") : tr("FLOPs (counted)"), 0, 1.5f);
    ImGui::TableSetupColumn(narrow ? tr("time") : tr("time (measured)"), 0, 1.8f);
    ImGui::TableHeadersRow();
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
        const OpRecord& o = ops[i];
        ImGui::TableNextRow();
        const bool hl = i == x.op;
        if (hl) {
            ImGui::TableSetBgColor(
                ImGuiTableBgTarget_RowBg0,
                to_u32(Rgba{f.pal.highlight.r, f.pal.highlight.g, f.pal.highlight.b, 90}));
            if (panel.scrolled_to != x.op) {
                ImGui::SetScrollHereY(0.5f);
                panel.scrolled_to = x.op;
            }
        }
        const ImU32 col = hl ? ImGui::GetColorU32(ImGuiCol_Text) : 0;
        cell(std::to_string(i), col);
        // core's names, in the window's language; a fused kernel's name (the code's) before each
        // op it ran
        cell(o.kernel ? std::string(o.kernel) + ": " + tr(op_kind_name(o.kind))
                      : std::string(tr(op_kind_name(o.kind))),
             col);
        cell(o.layer >= 0 ? std::to_string(o.layer) : "-", col);
        cell(shape_text(o.in), col);
        cell(shape_text(o.out), col);
        cell(format_flops(o.flops), col);
        char t[64];
        if (o.seconds >= 0)
            std::snprintf(t, sizeof t, "%s", format_seconds(o.seconds).c_str());
        else if (o.timed_with >= 0)
            std::snprintf(t, sizeof t, tr("in #%d's call"), o.timed_with);
        else if (st->path == PassPath::PerOp)
            std::snprintf(t, sizeof t, "%s", tr("not timed"));
        else
            std::snprintf(t, sizeof t, "%s", tr("in the step's graph"));
        cell(t, hl ? col : (o.seconds >= 0 ? 0 : f.theme.muted_text));
    }
    if (x.op < 0) panel.scrolled_to = -2;
    ImGui::EndTable();
}

}  // namespace kvs::gui
