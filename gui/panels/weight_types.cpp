// The weight-types panel (key W): the loaded model as stored and with its matrices in f32, f16,
// q8_0 and q4_K,
// each one's bytes of weights per decode token and its decode speed measured on this CPU
// (lessonlib/weight_types.h does the measuring), beside the read bandwidth measured by the same
// probe as `kvscope-cli bench --limits`. A decode step reads every weight once: fewer bytes a
// weight, more tokens a second, until the arithmetic is the limit. The measurement runs on a
// thread of its own (the window keeps drawing), on the page in one go (no threads there).
#include <imgui.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "core/model/transformer_model.h"
#include "core/util/error.h"
#include "core/util/format.h"
#include "gui/panels/weight_types.h"
#include "gui/state/strings.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/machine_limits.h"
#include "lessonlib/weight_types.h"

namespace kvs::gui {
namespace {

struct Cancelled {};

}  // namespace

void WeightTypesPanel::run() {
    try {
        const cpu::MachineLimits lim = cpu::measure_machine_limits(1, 3);
        {
            std::lock_guard<std::mutex> lock(mutex);
            read_bw = lim.read_bw.best;
        }
        const auto& m = dynamic_cast<const TransformerModel&>(*model);
        CpuBackend be(false);
        for (const WeightsWanted& t : panel_weight_types(m)) {
            auto r = measure_weight_types(m, be, {t}, 8, [this] {
                if (cancel) throw Cancelled{};
            });
            std::lock_guard<std::mutex> lock(mutex);
            rows.push_back(r.front());
        }
    } catch (const Cancelled&) {
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex);
        error = e.what();
    }
    running = false;
}

void WeightTypesPanel::stop() {
    cancel = true;
    if (thread.joinable()) thread.join();
}

void WeightTypesPanel::measure(const std::shared_ptr<const Model>& m, bool wait) {
    stop();
    rows.clear();
    error.clear();
    read_bw = 0;
    model = m;
    cancel = false;
    running = true;
#ifdef __EMSCRIPTEN__
    wait = true;  // the page has no threads: measured in one go
#endif
    if (wait)
        run();
    else
        thread = std::thread([this] { run(); });
}

void draw_weight_types(FrameContext& f, WeightTypesPanel& s) {
    if (!f.ui.show_weight_types) return;
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y * 0.5f), ImGuiCond_Appearing,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(0.97f);
    const std::string title = std::string(tr("Weight types")) + "###weight_types";
    if (ImGui::Begin(title.c_str(), &f.ui.show_weight_types,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                         ImGuiWindowFlags_NoSavedSettings)) {
        const auto* lm = dynamic_cast<const TransformerModel*>(f.model());
        if (!lm || lm->config().gpt2()) {
            ImGui::TextUnformatted(
                tr("This panel needs a Llama-style model (the toy and GPT-2 have no weights to "
                   "keep in other types)."));
        } else {
            ImGui::TextUnformatted(
                tr("Each decode token reads every weight once. The same model with its matrices in "
                   "each type, measured on this CPU (1 thread, median of 8 decode steps):"));
            const bool stale = s.model != f.snap.model;
            if (!s.running &&
                ImGui::Button(s.rows.empty() || stale ? tr("Measure") : tr("Measure again")))
                s.measure(f.snap.model, false);
            if (s.running) ImGui::TextUnformatted(tr("measuring..."));
            std::lock_guard<std::mutex> lock(s.mutex);
            if (!stale && !s.error.empty()) ImGui::TextUnformatted(s.error.c_str());
            if (!stale && !s.rows.empty() &&
                ImGui::BeginTable("weight_types", 6,
                                  ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
                for (const char* h : {tr("asked"), tr("kept as"), tr("bytes per token"),
                                      tr("decode tok/s"), tr("read rate"), tr("of bandwidth")})
                    ImGui::TableSetupColumn(h);
                ImGui::TableHeadersRow();
                char b[64];
                for (const WeightTypeRun& r : s.rows) {
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(r.asked ? weight_type_option_name(*r.asked).c_str()
                                                   : tr("as stored"));
                    ImGui::TableNextColumn();
                    if (!r.not_run.empty()) {
                        ImGui::TextUnformatted((std::string(tr("not run: ")) + r.not_run).c_str());
                        continue;
                    }
                    ImGui::TextUnformatted(r.kept.c_str());
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(format_bytes(double(r.bytes_per_token)).c_str());
                    ImGui::TableNextColumn();
                    std::snprintf(b, sizeof b, "%.1f", r.tokens_per_second());
                    ImGui::TextUnformatted(b);
                    ImGui::TableNextColumn();
                    std::snprintf(b, sizeof b, "%.1f GB/s", r.bytes_per_second() / 1e9);
                    ImGui::TextUnformatted(b);
                    ImGui::TableNextColumn();
                    if (s.read_bw > 0) {
                        std::snprintf(b, sizeof b, "%.0f%%",
                                      100 * r.bytes_per_second() / 1e9 / s.read_bw);
                        ImGui::TextUnformatted(b);
                    }
                }
                ImGui::EndTable();
            }
            if (!stale && s.read_bw > 0) {
                char b[200];
                std::snprintf(b, sizeof b,
                              tr("read bandwidth of this machine: %.1f GB/s (1 thread, best of 3 "
                                 "runs, as kvscope-cli bench --limits measures it)"),
                              s.read_bw);
                ImGui::TextUnformatted(b);
            }
        }
        f.record_panel("weight_types");
    }
    ImGui::End();
}

}  // namespace kvs::gui
