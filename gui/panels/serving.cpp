// The Serving view: many requests over one paged KV cache, step by step (the engine's serving
// shots, core/serving/serve_trace.h; nothing here computes a value). At the left the block pool,
// one cell a block, coloured by the request holding it, its filled rows solid; a block several
// requests hold is outlined with its reference count; a free block still in the prefix cache,
// waiting for a later request, grey with a dashed edge; under it the blocks held against what a
// contiguous cache per request would reserve. At the right each request's state and block table
// (logical block -> pool block), every request's state per step, and the batch's rows per step
// (prefill chunks and decode rows of one forward pass, the prompt chunks a token budget left).
#include "gui/panels/serving.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/util/format.h"
#include "gui/draw/text.h"
#include "gui/state/strings.h"
#include "gui/views/serving_layout.h"
#include "lessonlib/lesson_serve.h"

namespace kvs::gui {
namespace {

// Request i's colour: eight hues apart, lighter on the dark theme; `a` its alpha.
ImU32 request_colour(const FrameContext& f, int i, float a = 1) {
    const float h = std::fmod(i * 0.125f + (i / 8) * 0.0625f, 1.0f);
    ImColor c = ImColor::HSV(h, 0.6f, f.theme.dark ? 0.9f : 0.7f);
    c.Value.w = a;
    return c;
}

const char* state_words(ServeState s) {
    switch (s) {
        case ServeState::NotArrived:
            return tr("not arrived");
        case ServeState::Queued:
            return tr("queued");
        case ServeState::Running:
            return tr("running");
        case ServeState::Finished:
            return tr("finished");
        case ServeState::Preempted:
            return tr("preempted");
    }
    return "";
}

// Why the requests still queued after a step wait, in a few words.
const char* wait_words(WaitReason r) {
    switch (r) {
        case WaitReason::Places:
            return tr(" (no place)");
        case WaitReason::Budget:
            return tr(" (budget spent)");
        case WaitReason::Blocks:
            return tr(" (no blocks)");
        case WaitReason::Preemption:
            return tr(" (a preempting step)");
    }
    return "";
}

int shown_shot(const ServeTrace& t, const ServingPanel& p) {
    const int n = static_cast<int>(t.shots.size());
    return p.view < 0 ? n - 1 : std::min(p.view, n - 1);
}

// A dashed rectangle: the edge of a free block still in the prefix cache.
void dashed_rect(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 col, float dash, float t) {
    const auto line = [&](ImVec2 a, ImVec2 b) {
        const float len = std::hypot(b.x - a.x, b.y - a.y);
        for (float s = 0; s < len; s += 2 * dash) {
            const float e = std::min(len, s + dash);
            dl->AddLine(ImVec2(a.x + (b.x - a.x) * s / len, a.y + (b.y - a.y) * s / len),
                        ImVec2(a.x + (b.x - a.x) * e / len, a.y + (b.y - a.y) * e / len), col, t);
        }
    };
    line(p0, ImVec2(p1.x, p0.y));
    line(ImVec2(p1.x, p0.y), p1);
    line(p1, ImVec2(p0.x, p1.y));
    line(ImVec2(p0.x, p1.y), p0);
}

// A cell of the pool: its holders' colours side by side, the rows not written dimmed, the block's
// number and, when several hold it, its outline (in the text colour) and reference count; a free
// block still in the prefix cache grey, its edge dashed.
void draw_block(FrameContext& f, const ServeBlockShot& b, int index, int bs, ImVec2 a, float side) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float pad = std::max(1.0f, side * 0.06f);
    const ImVec2 p0(a.x + pad, a.y + pad), p1(a.x + side - pad, a.y + side - pad);
    dl->AddRectFilled(p0, p1, f.theme.panel_bg);
    const int k = static_cast<int>(b.holders.size());
    if (k == 0 && b.cached) {
        dl->AddRectFilled(p0, p1, f.theme.series_other);
        dashed_rect(dl, p0, p1, ImGui::GetColorU32(ImGuiCol_Text), std::max(2.0f, side * 0.08f),
                    std::max(1.0f, side * 0.04f));
        const float small = f.font_px * 0.85f;
        if (side >= small * 1.6f + 4)
            put_text(ImVec2(p0.x + 3, p0.y + 2), IM_COL32(0, 0, 0, 255), std::to_string(index),
                     small);
        return;
    }
    const float row_h = (p1.y - p0.y) / bs, w = (p1.x - p0.x) / std::max(1, k);
    for (int h = 0; h < k; ++h)
        for (int r = 0; r < bs; ++r)
            dl->AddRectFilled(ImVec2(p0.x + h * w, p0.y + r * row_h),
                              ImVec2(p0.x + (h + 1) * w, p0.y + (r + 1) * row_h),
                              request_colour(f, b.holders[h], r < b.rows ? 1.0f : 0.22f));
    const ImU32 ink = k > 0 ? IM_COL32(0, 0, 0, 255) : f.theme.muted_text;
    const float small = f.font_px * 0.85f, t = k > 1 ? std::max(2.0f, side * 0.07f) : 1;
    if (side >= small * 1.6f + 2 * t)
        put_text(ImVec2(p0.x + t + 2, p0.y + t), ink, std::to_string(index), small);
    if (k > 1) {
        dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, t);
        std::string refs = "x";
        refs += std::to_string(k);
        if (side >= small * 2.4f + 2 * t)
            put_text(ImVec2(p1.x - text_width(refs, small) - t - 2, p1.y - small - t), ink, refs,
                     small);
    } else {
        dl->AddRect(p0, p1, f.theme.grid);
    }
}

void draw_pool(FrameContext& f, const ServeTrace& t, const ServeShot& s, const ServingLayout& L) {
    char b[256];
    std::snprintf(b, sizeof b, tr("Block pool: %d blocks of %d rows"), t.config.pool_blocks,
                  t.config.block_size);
    put_text(ImVec2(L.pool_title.x, L.pool_title.y), ImGui::GetColorU32(ImGuiCol_Text),
             clipped(b, L.pool_title.w));
    for (int i = 0; i < static_cast<int>(s.blocks.size()); ++i) {
        const ImVec2 a(L.grid.x + (i % L.cols) * L.cell, L.grid.y + (i / L.cols) * L.cell);
        draw_block(f, s.blocks[i], i, t.config.block_size, a, L.cell);
        if (ImGui::IsWindowHovered() &&
            ImGui::IsMouseHoveringRect(a, ImVec2(a.x + L.cell, a.y + L.cell))) {
            std::string who;
            for (int h : s.blocks[i].holders) {
                who += ' ';
                who += std::to_string(h + 1);
            }
            if (who.empty() && s.blocks[i].cached)
                std::snprintf(b, sizeof b,
                              tr("block %d: no holder; its %d rows stay in the prefix cache until "
                                 "a later request finds them or the pool takes the block (least "
                                 "recently freed first)"),
                              i, t.config.block_size);
            else
                std::snprintf(
                    b, sizeof b, tr("block %d: %d of %d rows written; held by requests:%s"), i,
                    s.blocks[i].rows, t.config.block_size, who.empty() ? " -" : who.c_str());
            ImGui::SetTooltip("%s", b);
        }
    }
}

// A horizontal bar `frac` of `w` long at the cursor position `at`, a line high.
void bar(const FrameContext& f, ImVec2 at, float w, float frac, ImU32 col) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float h = f.font_px * 0.9f;
    dl->AddRectFilled(at, ImVec2(at.x + w * std::clamp(frac, 0.0f, 1.0f), at.y + h), col);
    dl->AddRect(at, ImVec2(at.x + w, at.y + h), f.theme.grid);
}

// The blocks held now against a contiguous cache per running request; returns where it ends.
float draw_memory(FrameContext& f, const ServeTrace& t, const ServeShot& s,
                  const ServingLayout& L) {
    const int bs = t.config.block_size;
    const double block_bytes = double(bs) * double(t.stats.bytes_per_row);
    const int most = std::max({t.config.pool_blocks, s.contiguous_blocks, 1});
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    char b[400];
    float y = L.memory.y;
    std::snprintf(
        b, sizeof b, tr("Held now: %d blocks (%s), %d of them by several requests at once"),
        s.used_blocks, format_bytes(s.used_blocks * block_bytes).c_str(), s.multi_holder_blocks);
    y += put_wrapped(ImVec2(L.memory.x, y), text, b, L.memory.w);
    bar(f, ImVec2(L.memory.x, y), L.memory.w, float(s.used_blocks) / most, f.theme.series[0]);
    y += L.line_h;
    if (s.cached_free_blocks > 0) {
        std::snprintf(b, sizeof b,
                      tr("Free but cached: %d blocks keep their prefix rows for later requests "
                         "(dashed)"),
                      s.cached_free_blocks);
        y += put_wrapped(ImVec2(L.memory.x, y), text, b, L.memory.w);
        bar(f, ImVec2(L.memory.x, y), L.memory.w, float(s.cached_free_blocks) / most,
            f.theme.series_other);
        y += L.line_h;
    }
    const int ctx_blocks = (t.context + bs - 1) / bs;
    std::snprintf(b, sizeof b,
                  tr("A contiguous cache per request would reserve %d running x %d rows = %d "
                     "blocks (%s)"),
                  s.running, t.context, s.contiguous_blocks,
                  format_bytes(double(s.running) * ctx_blocks * block_bytes).c_str());
    y += put_wrapped(ImVec2(L.memory.x, y), text, b, L.memory.w);
    bar(f, ImVec2(L.memory.x, y), L.memory.w, float(s.contiguous_blocks) / most,
        f.theme.series_other);
    y += L.line_h;
    y += put_wrapped(ImVec2(L.memory.x, y), f.theme.muted_text,
                     tr("Counted from the block tables after the step, not measured."), L.memory.w);
    return y;
}

// Each request's name, state and block table: its logical blocks in order, each the pool block
// it names (its number when it fits), coloured as in the grid.
void draw_tables(FrameContext& f, const ServeTrace& t, const ServeShot& s, const ServingLayout& L) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    put_text(ImVec2(L.tables.x, L.tables.y - L.line_h), ImGui::GetColorU32(ImGuiCol_Text),
             clipped(tr("Each request's block table (logical block -> pool block)"), L.tables.w));
    const float name_w = fh * 5.5f, state_w = fh * 5.5f;
    char b[96];
    for (int i = 0; i < static_cast<int>(s.requests.size()); ++i) {
        const ServeRequestShot& q = s.requests[i];
        const float y = L.tables.y + i * L.table_row_h;
        std::snprintf(b, sizeof b, tr("request %d"), i + 1);
        dl->AddRectFilled(ImVec2(L.tables.x, y + fh * 0.2f),
                          ImVec2(L.tables.x + fh * 0.5f, y + fh * 1.1f), request_colour(f, i));
        put_text(ImVec2(L.tables.x + fh * 0.7f, y), ImGui::GetColorU32(ImGuiCol_Text),
                 clipped(b, name_w - fh * 0.8f));
        const ImU32 sc = q.state == ServeState::Preempted ? f.theme.error_text
                         : q.state == ServeState::Running ? f.theme.ok_text
                                                          : f.theme.muted_text;
        put_text(ImVec2(L.tables.x + name_w, y), sc, clipped(state_words(q.state), state_w - 4));
        const int n = static_cast<int>(q.table.size());
        if (n == 0) continue;
        const float x0 = L.tables.x + name_w + state_w, avail = L.tables.w - name_w - state_w;
        const float w = std::min(fh * 2.2f, avail / n), h = L.table_row_h - fh * 0.25f;
        const float small = fh * 0.85f;
        for (int j = 0; j < n; ++j) {
            const ImVec2 a(x0 + j * w, y);
            const int blk = q.table[j];
            if (blk < 0) {
                dl->AddRect(a, ImVec2(a.x + w - 1, a.y + h), f.theme.grid);
                continue;
            }
            const int rows = std::clamp(q.len - j * t.config.block_size, 0, t.config.block_size);
            const bool shared = s.blocks[blk].holders.size() > 1;
            dl->AddRectFilled(a, ImVec2(a.x + w - 1, a.y + h),
                              request_colour(f, i, rows == t.config.block_size ? 1.0f : 0.45f));
            if (shared)
                dl->AddRect(a, ImVec2(a.x + w - 1, a.y + h), ImGui::GetColorU32(ImGuiCol_Text), 0,
                            0, std::max(2.0f, fh * 0.12f));
            const std::string num = std::to_string(blk);
            if (text_width(num, small) + 4 <= w)
                put_text(ImVec2(a.x + 2, a.y + (h - small) * 0.5f), IM_COL32(0, 0, 0, 255), num,
                         small);
        }
    }
}

// The steps that fit in `box` as columns at most a line wide, ending at the step shown.
struct StepColumns {
    int first = 1, last = 0;  // shots [first, last]
    float x = 0, w = 0;
};
StepColumns step_columns(const FrameContext& f, const ServeTrace& t, int shown, Box box) {
    StepColumns c;
    const float label_w = f.font_px * 2.2f;
    c.x = box.x + label_w;
    const float avail = box.w - label_w;
    const int steps = std::max(1, static_cast<int>(t.shots.size()) - 1);
    c.w = std::max(f.font_px * 0.5f, std::min(f.font_px * 1.2f, avail / steps));
    const int fit = std::max(1, static_cast<int>(avail / c.w));
    c.last = std::max(shown, std::min(steps, fit));
    c.first = std::max(1, c.last - fit + 1);
    return c;
}

// Every request's state at each step (a row a request, a column a step), then each step's pass:
// a bar of its prefill rows under its decode rows.
void draw_timeline(FrameContext& f, const ServeTrace& t, int shown, const ServingLayout& L) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float fh = f.font_px;
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const StepColumns c = step_columns(f, t, shown, L.timeline);
    put_text(ImVec2(L.timeline.x, L.timeline.y - L.line_h), text,
             clipped(tr("Requests step by step: queued (outline), running (filled), preempted "
                        "(red), finished or not arrived (empty)"),
                     L.timeline.w));
    const int R = static_cast<int>(t.prompts.size());
    for (int i = 0; i < R; ++i) {
        const float y = L.timeline.y + i * L.timeline_row_h;
        put_text(ImVec2(L.timeline.x, y), f.theme.muted_text, std::to_string(i + 1), fh * 0.85f);
        for (int k = c.first; k <= c.last && k < static_cast<int>(t.shots.size()); ++k) {
            const ImVec2 a(c.x + (k - c.first) * c.w + 1, y + 1);
            const ImVec2 z(a.x + c.w - 2, y + L.timeline_row_h - 2);
            switch (t.shots[k]->requests[i].state) {
                case ServeState::Queued:
                    dl->AddRect(a, z, f.theme.grid);
                    break;
                case ServeState::Running:
                    dl->AddRectFilled(a, z, request_colour(f, i));
                    break;
                case ServeState::Preempted:
                    dl->AddRectFilled(a, z, f.theme.error_text);
                    break;
                case ServeState::Finished:
                case ServeState::NotArrived:
                    break;
            }
        }
    }
    // The step shown: a frame around its column.
    if (shown >= c.first && shown <= c.last) {
        const float x = c.x + (shown - c.first) * c.w;
        dl->AddRect(ImVec2(x, L.timeline.y - 2),
                    ImVec2(x + c.w, L.timeline.y + R * L.timeline_row_h + 2),
                    ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 2);
    }
    // The batch: a bar a step, its height the rows of the pass.
    const ServeShot& s = *t.shots[shown];
    char b[400];
    if (shown > 0) {
        std::snprintf(b, sizeof b, tr("Step %d's pass: %d prefill rows + %d decode rows"), shown,
                      s.step.prefill_rows, s.step.decode_rows);
        // The prompts this pass computed only part of: the token budget left the rest.
        char more[200];
        if (s.step.partial_prompts > 0) {
            std::snprintf(more, sizeof more,
                          tr("; %d prompt chunks with more to come (token budget %d)"),
                          s.step.partial_prompts, t.config.max_num_batched_tokens);
            std::strncat(b, more, sizeof b - std::strlen(b) - 1);
        }
        if (s.step.cached_blocks_found > 0) {
            std::snprintf(more, sizeof more, tr("; %d blocks found in the prefix cache"),
                          s.step.cached_blocks_found);
            std::strncat(b, more, sizeof b - std::strlen(b) - 1);
        }
        if (s.step.queued > 0) {
            std::snprintf(more, sizeof more, tr("; %d queued%s"), s.step.queued,
                          wait_words(s.step.waited_for));
            std::strncat(b, more, sizeof b - std::strlen(b) - 1);
        }
    } else
        std::snprintf(b, sizeof b, "%s", tr("The batch's rows per step (no step run yet)"));
    put_text(ImVec2(L.batch.x, L.batch.y - L.line_h * 2), text, clipped(b, L.batch.w));
    // The key: a swatch and the words for each part of a bar.
    float kx = L.batch.x;
    const float ky = L.batch.y - L.line_h, sw = f.font_px * 0.8f;
    for (int part = 0; part < 2; ++part) {
        const std::string words = part == 0 ? tr("prefill rows") : tr("decode rows");
        dl->AddRectFilled(ImVec2(kx, ky + f.font_px * 0.15f),
                          ImVec2(kx + sw, ky + f.font_px * 0.15f + sw), f.theme.series[part]);
        put_text(ImVec2(kx + sw * 1.4f, ky), f.theme.muted_text, words);
        kx += sw * 1.4f + text_width(words, f.font_px) + f.font_px * 1.5f;
    }
    int most = 1;
    for (std::size_t k = 1; k < t.shots.size(); ++k)
        most = std::max(most, t.shots[k]->step.prefill_rows + t.shots[k]->step.decode_rows);
    const float base = L.batch.y + L.batch.h;
    for (int k = c.first; k <= c.last && k < static_cast<int>(t.shots.size()); ++k) {
        const ServeStep& st = t.shots[k]->step;
        const float x = c.x + (k - c.first) * c.w + 1;
        const float hp = L.batch.h * st.prefill_rows / most;
        const float hd =
            std::max(st.decode_rows > 0 ? 2.0f : 0.0f, L.batch.h * st.decode_rows / most);
        dl->AddRectFilled(ImVec2(x, base - hp), ImVec2(x + c.w - 2, base), f.theme.series[0]);
        dl->AddRectFilled(ImVec2(x, base - hp - hd), ImVec2(x + c.w - 2, base - hp),
                          f.theme.series[1]);
    }
    dl->AddLine(ImVec2(c.x, base), ImVec2(L.batch.x + L.batch.w, base), f.theme.axis);
    std::snprintf(b, sizeof b, tr("steps %d to %d"), c.first, c.last);
    put_text(ImVec2(c.x, base + 2), f.theme.muted_text, clipped(b, L.batch.w - (c.x - L.batch.x)));
}

// The controls: start again, the block size, the prefix cache; then what the step shown did.
void draw_controls(FrameContext& f, ServingPanel& p, const ServeTrace* t, int shown) {
    if (ImGui::Button(tr("Start again (R)"))) restart_serving(f, p);
    same_line_or_wrap(text_width(tr("block size"), f.font_px) + f.font_px * 8);
    ImGui::TextUnformatted(tr("block size"));
    for (int bs : {2, 4, 8, 16}) {
        ImGui::SameLine();
        const std::string label = std::to_string(bs) + "##bs";
        if (ImGui::RadioButton(label.c_str(), p.setup.config.block_size == bs)) {
            p.setup.config.block_size = bs;
            restart_serving(f, p);
        }
    }
    same_line_or_wrap(text_width(tr("prefix cache"), f.font_px) + f.font_px * 2);
    // The box shows what the engine ran: under a window the scheduler turns the prefix cache off
    // (a row depends on what its pass saw, so it is no other request's row), whatever was asked.
    const bool windowed = t && t->config.window > 0;
    bool ran = windowed ? t->config.prefix_caching : p.setup.config.prefix_caching;
    ImGui::BeginDisabled(windowed);
    if (ImGui::Checkbox(tr("prefix cache"), windowed ? &ran : &p.setup.config.prefix_caching))
        restart_serving(f, p);
    ImGui::EndDisabled();
    if (windowed) {
        same_line_or_wrap(text_width(tr("(off under a window)"), f.font_px));
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextUnformatted(tr("(off under a window)"));
        ImGui::PopStyleColor();
    }
    if (f.layout) f.layout->serving.prefix_cache = ran;
    if (!t) return;
    char b[400];
    const ServeShot& s = *t->shots[shown];
    if (shown == 0) {
        std::snprintf(b, sizeof b,
                      tr("Before the first step: %d requests wait in the queue (%d at most run "
                         "at once)."),
                      static_cast<int>(t->prompts.size()), t->config.max_num_seqs);
    } else {
        std::snprintf(b, sizeof b,
                      tr("Step %d of %d%s: %d joined the batch, %d finished, %d preempted, %d "
                         "still queued."),
                      shown, static_cast<int>(t->shots.size()) - 1,
                      t->finished ? tr(" (every request has finished)") : "",
                      static_cast<int>(s.step.admitted.size()),
                      static_cast<int>(s.step.retired.size()),
                      static_cast<int>(s.step.preempted.size()), s.step.queued);
    }
    ImGui::TextWrapped("%s", b);
    ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
    ImGui::TextWrapped(
        "%s", tr("Grid: a cell a block, in its holder's colour, written rows solid; outlined "
                 "(x2): held by several; grey, dashed: free, still cached. Right or Space: next "
                 "step; [ or Shift+Left: back; V: close."));
    ImGui::PopStyleColor();
}

}  // namespace

void restart_serving(FrameContext& f, ServingPanel& p) {
    p.asked_for = f.snap.model;
    p.view = -1;
    f.worker.serve_open(p.setup);
}

void follow_lesson_serve(FrameContext& f, ServingPanel& p, bool lesson_open, bool& show) {
    const LessonRun& run = f.snap.lesson;
    if (lesson_open && run.target >= 0) return;  // a step still playing: its @serve comes after
    const std::shared_ptr<const ServePlan> plan = lesson_open ? run.serve : nullptr;
    if (plan == p.lesson) return;
    if (!p.lesson) p.own = p.setup;
    p.lesson = plan;
    if (plan) {
        // The same scheduler settings as the run the lesson's figures come from.
        p.setup = ServeSetup{};
        p.setup.prompts = plan->prompts;
        p.setup.config = serve_config(*plan);
        show = true;
    } else {
        p.setup = p.own;
        show = false;
    }
    if (f.snap.model && !f.snap.replay) {
        restart_serving(f, p);
        // On to the step whose block tables the lesson printed.
        if (plan && run.serve_steps > 0) f.worker.serve_step(run.serve_steps);
    }
}

bool serving_key(FrameContext& f, ServingPanel& p, int key, int mods) {
    const ServeTrace* t = f.snap.serving.get();
    const bool shift = mods & GLFW_MOD_SHIFT;
    const int n = t ? static_cast<int>(t->shots.size()) : 0;
    const int cur = t ? shown_shot(*t, p) : 0;
    auto show = [&](int k) { p.view = k >= n - 1 ? -1 : std::max(0, k); };
    switch (key) {
        case GLFW_KEY_SPACE:
        case GLFW_KEY_RIGHT:
            if (shift && key == GLFW_KEY_RIGHT) {
                show(cur + 1);
            } else if (t && cur < n - 1) {
                show(cur + 1);
            } else if (t && !t->finished && !f.snap.busy) {
                p.view = -1;
                f.worker.serve_step(1);
            }
            return true;
        case GLFW_KEY_RIGHT_BRACKET:
            show(cur + 1);
            return true;
        case GLFW_KEY_LEFT:
            if (shift) show(cur - 1);
            return true;
        case GLFW_KEY_LEFT_BRACKET:
            show(cur - 1);
            return true;
        case GLFW_KEY_HOME:
            show(0);
            return true;
        case GLFW_KEY_END:
            p.view = -1;
            return true;
        case GLFW_KEY_R:
            restart_serving(f, p);
            return true;
        case GLFW_KEY_P:  // play runs the stage's session, not shown here
            return true;
        default:
            return false;
    }
}

void draw_serving(FrameContext& f, ServingPanel& p) {
    // A run for the model open, asked once per model (the command line may have queued one).
    if (f.snap.serving_model && f.snap.serving_model == f.snap.model)
        p.asked_for = f.snap.model;
    else if (f.snap.model && p.asked_for != f.snap.model && !f.snap.replay && f.worker.idle())
        restart_serving(f, p);
    const ServeTrace* t = f.snap.serving_model == f.snap.model ? f.snap.serving.get() : nullptr;
    if (t && t->shots.empty()) t = nullptr;
    const int shown = t ? shown_shot(*t, p) : 0;
    draw_controls(f, p, t, shown);
    if (!t) {
        if (f.snap.replay)
            ImGui::TextUnformatted(tr("A recorded run cannot serve requests."));
        else if (!f.snap.serving_error.empty() && !f.snap.busy)
            ImGui::TextWrapped("%s: %s", tr("The serving run could not start"),
                               f.snap.serving_error.c_str());
        else
            ImGui::TextUnformatted(tr("queueing the serving requests"));
        return;
    }
    const ServeShot& s = *t->shots[shown];
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    ServingInput in;
    // The content's height as unscrolled (the grid does not change as the view scrolls).
    const float scroll = ImGui::GetScrollY();
    const float bottom =
        ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y;
    in.content = {at.x, at.y + f.font_px * 0.5f, avail.x,
                  bottom - (at.y + scroll) - f.font_px * 0.5f};
    in.fh = f.font_px;
    in.blocks = static_cast<int>(s.blocks.size());
    in.requests = static_cast<int>(s.requests.size());
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    in.window = {vp->Pos.x, vp->Pos.y - scroll, vp->Size.x, vp->Size.y};
    const ServingLayout L = layout_serving(in);
    draw_pool(f, *t, s, L);
    const float memory_end = draw_memory(f, *t, s, L);
    draw_tables(f, *t, s, L);
    draw_timeline(f, *t, shown, L);
    ImGui::Dummy(ImVec2(avail.x, std::max(memory_end, L.bottom) - at.y));
    if (f.layout) {
        ServingRecord& r = f.layout->serving;
        r.open = true;
        r.blocks = in.blocks;
        r.cols = L.cols;
        r.block_size = t->config.block_size;
        r.grid = {L.grid.x, L.grid.y, L.grid.w, L.grid.h};
        r.cell = L.cell;
        r.shot = shown;
        r.shots = static_cast<int>(t->shots.size());
        r.used_blocks = s.used_blocks;
        r.multi_holder_blocks = s.multi_holder_blocks;
        r.cached_free_blocks = s.cached_free_blocks;
        r.cached_blocks_found = s.step.cached_blocks_found;
        r.budget = t->config.max_num_batched_tokens;
        r.prompt_chunks = s.step.partial_prompts;
        for (const auto& q : s.requests)
            r.let_go_entries += static_cast<int>(std::count(q.table.begin(), q.table.end(), -1));
        r.contiguous_blocks = s.contiguous_blocks;
        r.prefill_rows = s.step.prefill_rows;
        r.decode_rows = s.step.decode_rows;
        for (const auto& q : s.requests) r.states.push_back(serve_state_name(q.state));
    }
}

}  // namespace kvs::gui
