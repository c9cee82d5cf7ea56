#include "gui/app/app.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/model/kv_what_if.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/format.h"
#include "gui/actions/actions.h"
#include "gui/actions/export.h"
#include "gui/app/key_queue.h"
#include "gui/draw/screenshot.h"
#include "gui/draw/text_record.h"
#include "gui/panels/help.h"
#include "gui/panels/messages.h"
#include "gui/panels/next_token.h"
#include "gui/panels/time.h"
#include "gui/panels/toolbar.h"
#include "gui/panels/toy.h"
#include "gui/state/strings.h"
#include "gui/views/inside_attention_text.h"
#include "lessonlib/finish_words.h"

namespace kvs::gui {
namespace {

WeightScale weight_scale_from(const std::string& s) {
    return s == "linear" ? WeightScale::Linear : s == "log" ? WeightScale::Log : WeightScale::Sqrt;
}

std::string timestamped_png() {
    char b[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(b, sizeof b, "kvscope-%Y%m%d-%H%M%S.png", std::localtime(&t));
    return b;
}

// The stage's panel a lesson's @show names.
const char* panel_for_show(const std::string& show) {
    if (show == "prompt" || show == "tokens") return "tokens";
    if (show == "attention") return "attention";
    if (show == "kv" || show == "whatif") return "kv";
    if (show == "time") return "time";
    if (show == "next") return "next";
    if (show == "toy") return "toy";
    if (show == "batch" || show == "scale") return "stage";
    return "";
}

// The panels a lesson step's @show names ("kv attention size=full"), as stage ids, and how large.
std::vector<std::string> shown_panels(const std::string& arg, std::string* size) {
    std::vector<std::string> out;
    std::istringstream words(arg);
    std::string w;
    while (words >> w) {
        if (w.rfind("size=", 0) == 0) {
            if (size) *size = w.substr(5);
            continue;
        }
        const std::string id = panel_for_show(w);
        if (!id.empty() && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    }
    return out;
}

const char* finish_message(FinishReason reason) {
    return finish_sentence(reason, report_lang(language()));
}

}  // namespace

App::App(GlWindow& window, EngineWorker& worker, UiState& ui, Platform& platform, bool headless)
    : window_(window), worker_(worker), ui_(ui), platform_(platform), headless_(headless) {}

const std::string& App::glyph_text() {
    if (glyph_text_read_) return glyph_text_;
    glyph_text_read_ = true;
    for (const auto& s : ui_strings()) glyph_text_ += s.zh;
    for (const auto& e : lesson_catalog(lesson_ui_).entries())
        for (const auto& path : e.path) {
            // Through the checked reader: a FIFO or a device in the lessons folder would block
            // or never end; such a lesson simply adds no glyphs.
            try {
                const auto bytes = read_file_bytes(path, std::size_t(1) << 20);
                glyph_text_.append(bytes.begin(), bytes.end());
            } catch (const Error&) {
            }
        }
    return glyph_text_;
}

std::vector<std::uint32_t> App::missing_glyphs() {
    // Every character of the strings and lessons the window may draw that its font lacks
    // (ImGui would draw '?'): empty when the fonts are complete.
    std::vector<std::uint32_t> missing;
    const ImFont* font =
        ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
    std::string text = glyph_text();
    for (const auto& s : ui_strings()) text += s.en;
    const char* p = text.c_str();
    const char* end = p + text.size();
    while (p < end) {
        unsigned int c = 0;
        const int n = ImTextCharFromUtf8(&c, p, end);
        p += n > 0 ? n : 1;
        if (c < 0x20 || c == 0x7F) continue;
        if (!font || !font->FindGlyphNoFallback(static_cast<ImWchar>(c)))
            if (std::find(missing.begin(), missing.end(), c) == missing.end()) missing.push_back(c);
    }
    return missing;
}

void App::handle_keys(FrameContext& f) {
    const bool typing = ImGui::GetIO().WantTextInput;  // typing in the prompt or a number field
    for (const KeyPress& k : take_key_presses()) {
        const bool ctrl = k.mods & GLFW_MOD_CONTROL;
        const KeyBinding* b = binding_for(k.key, k.mods, typing);
        if (typing || (b && b->while_typing)) {
            if (b) do_key(f, *b, k.mods);
            continue;
        }
        // A panel that asks for keys takes them first: a lesson's question waiting for its
        // answer, the Serving view stepping its own run with the stage's keys.
        if (!ctrl && lesson_question_key(f, lesson_ui_, k.key)) continue;
        if (ui_.show_serving && !ctrl && serving_key(f, serving_, k.key, k.mods)) continue;
        if (b) do_key(f, *b, k.mods);
    }
}

void App::scrub(FrameContext& f, int delta) {
    const int n = f.snap.steps();
    if (n == 0) return;
    const int cur = f.step < 0 ? n - 1 : f.step;
    const int next = std::clamp(cur + delta, 0, n - 1);
    ui_.view_step = next >= n - 1 ? -1 : next;
    ui_.playing = false;
}

void App::change_text_size(float delta) {
    ui_.settings.font_scale = std::clamp(ui_.settings.font_scale + delta, 0.5f, 4.0f);
}

// Esc closes one layer of the stage at a time: the help, the Serving view, a panel shown alone,
// presenter mode.
void App::back_one_layer() {
    if (ui_.show_help)
        ui_.show_help = false;
    else if (ui_.show_serving)
        ui_.show_serving = false;
    else if (!ui_.maximised.empty())
        ui_.maximised.clear();
    else
        ui_.presenter = false;
}

void App::do_key(FrameContext& f, const KeyBinding& b, int mods) {
    using A = KeyAction;
    switch (b.action) {
        case A::Step:
            return request_step(f);
        case A::Play:
            ui_.playing = !ui_.playing && !f.snap.finished();
            ui_.view_step = -1;
            return;
        case A::Reset:
            return request_reset(f);
        case A::CycleCache:
            return cycle_cache(f);
        case A::ScrubBack:
            return scrub(f, -1);
        case A::ScrubForward:
            return scrub(f, +1);
        case A::FirstStep:
            if (f.snap.steps() > 0) ui_.view_step = 0;
            return;
        case A::NewestStep:
            ui_.view_step = -1;
            return;
        case A::TextLarger:
            return change_text_size(+0.125f);
        case A::TextSmaller:
            return change_text_size(-0.125f);
        case A::Theme:
            ui_.settings.theme = ui_.settings.theme == "dark" ? "light" : "dark";
            return;
        case A::FullScreen:
            toggle_fullscreen_ = true;
            return;
        case A::Maximise:
            return toggle_maximise(b.panel);
        case A::Restore:
            ui_.maximised.clear();
            return;
        case A::Presenter:
            ui_.presenter = !ui_.presenter;
            return;
        case A::Screenshot:
            want_screenshot_ = true;
            return;
        case A::Export:
            return export_shown(f, ExportWhat::All);
        case A::Lesson:
            if (ui_.show_lesson)
                close_lesson(ui_);
            else
                open_lesson(ui_, lesson_ui_, worker_, std::max(1, lesson_ui_.number),
                            lesson_ui_.step);
            return;
        case A::LessonNext:
            return lesson_next(f, lesson_ui_);
        case A::LessonBack:
            return lesson_back(f, lesson_ui_);
        case A::Inside:
            return toggle_inside_attention(ui_, explain_);
        case A::InsideRowUp:
            return move_inside_attention_row(f, explain_, -1);
        case A::InsideRowDown:
            return move_inside_attention_row(f, explain_, +1);
        case A::InsideStage:
            return explain_stage_key(ui_, explain_, mods & GLFW_MOD_SHIFT);
        case A::InsidePlay:
            return play_explain_stages(ui_, explain_);
        case A::Bidirectional:
            return toggle_bidirectional(f);
        case A::OpStrip:
            return toggle_op_strip(ui_, explain_);
        case A::OpBack:
            return walk_ops(f, explain_, -1);
        case A::OpNext:
            return walk_ops(f, explain_, +1);
        case A::Temperature:
            return nudge_sampler(f, SamplerKnob::Temperature, mods & GLFW_MOD_SHIFT);
        case A::TopK:
            return nudge_sampler(f, SamplerKnob::TopK, mods & GLFW_MOD_SHIFT);
        case A::TopP:
            return nudge_sampler(f, SamplerKnob::TopP, mods & GLFW_MOD_SHIFT);
        case A::WeightTypes:
            ui_.show_weight_types = !ui_.show_weight_types;
            return;
        case A::Serving:
            ui_.show_serving = !ui_.show_serving;
            return;
        case A::Help:
            ui_.show_help = !ui_.show_help;
            return;
        case A::Back:
            return back_one_layer();
    }
}

void App::follow_engine(const EngineSnapshot& snap) {
    // A lesson step changed the model, prompt, cache mode or sampler: the controls show them.
    if (snap.lesson.serial != seen_lesson_serial_) {
        seen_lesson_serial_ = snap.lesson.serial;
        Settings& st = ui_.settings;
        ui_.prompt = snap.prompt;
        ui_.prompt_dirty = false;
        if (!snap.model_spec.empty()) {
            const bool named = snap.model_spec == "toy" || snap.model_spec == "default" ||
                               snap.model_spec == "stories260K";
            st.model = named ? snap.model_spec : "file";
            if (!named) st.model_path = snap.model_spec;
        }
        st.cache = snap.cache;
        st.temperature = snap.sampler.temperature;
        st.top_k = snap.sampler.top_k;
        st.top_p = snap.sampler.top_p;
        st.seed = snap.sampler.seed;
        if (snap.lesson.highlight_serial != seen_highlight_) {
            seen_highlight_ = snap.lesson.highlight_serial;
            st.layer = snap.lesson.layer;
            st.head = snap.lesson.head;
        }
        follow_lesson_explain(ui_, explain_, snap.lesson);
    }
    // A recorded run's prompt shows in the prompt field (it cannot be changed there).
    if (snap.replay && seen_replay_generation_ != snap.generation) {
        seen_replay_generation_ = snap.generation;
        ui_.prompt = snap.prompt;
        ui_.prompt_dirty = false;
    }
    // An export that ran names its files (the page offers each as a download).
    if (snap.export_serial != seen_export_serial_) {
        seen_export_serial_ = snap.export_serial;
        std::string names;
        for (const std::string& p : snap.exported) {
            names += (names.empty() ? "" : ", ") + p;
            platform_.screenshot_saved(p);
        }
        ui_.notice = std::string(tr("saved")) + " " + names;
        ui_.notice_until = ImGui::GetTime() + 6;
    }
    // Generation that ended says so once, with why.
    if (snap.finished() && announced_finish_ != snap.generation) {
        announced_finish_ = snap.generation;
        char b[200];
        std::snprintf(b, sizeof b, finish_message(snap.sessions[0].finish_reason),
                      snap.model ? snap.model->config().seq_len : 0);
        ui_.notice = b;
        ui_.notice_until = ImGui::GetTime() + 6;
        ui_.playing = false;
    }
}

void App::play(FrameContext& f) {
    if (!ui_.playing) return;
    if (f.snap.finished() || f.snap.sessions.empty()) {
        ui_.playing = false;
        return;
    }
    const double now = ImGui::GetTime();
    if (f.snap.busy || now - last_play_request_ < 1.0 / ui_.settings.play_speed) return;
    last_play_request_ = now;
    ui_.view_step = -1;
    if (f.snap.steps() == 0)
        worker_.prefill();
    else
        worker_.decode(1);
}

namespace {

// Each panel of the stage: its id (StageSlot::id), title, and the name --layout-json records
// (App::draw_panel draws it).
struct PanelDef {
    const char* id;
    const char* title;
    const char* record;
};

const PanelDef* panel_def(const std::string& id) {
    static const PanelDef defs[] = {
        {"tokens", tr_later("Prompt and tokens"), "tokens"},
        {"toy", tr_later("Toy example: each head's output per token"), "toy_table"},
        {"attention", tr_later("Attention"), "attention"},
        {"kv", tr_later("KV cache"), "kv_cache"},
        {"time", tr_later("Time"), "time"},
        {"next", tr_later("Next token"), "next_token"},
        {"map", tr_later("Map of the step"), "step_map"},
        {"lesson", tr_later("Lesson"), "lesson"},
        {"stage", tr_later("Lesson: what this step measured"), "lesson_stage"},
        {"inside", tr_later("Inside attention"), "inside_attention"},
        {"ops", tr_later("Ops of this step"), "op_strip"},
        {"serving", tr_later("Serving: many requests over one paged KV cache"), "serving"},
    };
    for (const auto& d : defs)
        if (id == d.id) return &d;
    return nullptr;
}

}  // namespace

void App::toggle_maximise(const std::string& id) {
    ui_.maximised = ui_.maximised == id ? std::string() : id;
    if (ui_.maximised == "inside" && !explain_.open)
        open_inside_attention(ui_, explain_, 0, ui_.settings.layer, ui_.settings.head, -1);
}

void App::draw_panel(FrameContext& f, const std::string& id) {
    if (id == "tokens")
        draw_tokens(f, tokens_);
    else if (id == "toy")
        draw_toy_table(f);
    else if (id == "attention")
        draw_attention(f, attention_, explain_, lesson_ui_);
    else if (id == "kv")
        draw_kv_cache(f, kv_);
    else if (id == "time")
        draw_time(f);
    else if (id == "next")
        draw_next_token(f, next_);
    else if (id == "map")
        draw_step_map(f, map_, explain_);
    else if (id == "lesson" && ui_.show_lesson)
        draw_lesson(f, lesson_, lesson_ui_);
    else if (id == "stage")
        draw_lesson_stage(f, lesson_stage_,
                          kv_.layer);  // lesson 8's caches at the KV panel's layer
    else if (id == "inside")
        draw_inside_attention(f, explain_);
    else if (id == "ops")
        draw_op_strip(f, op_strip_, explain_);
    else if (id == "serving")
        draw_serving(f, serving_);
}

void App::draw_slot(FrameContext& f, const StageSlot& slot) {
    const PanelDef* d = panel_def(slot.id);
    if (!d) return;
    panel_rects_[slot.id] = ImVec4(slot.box.x, slot.box.y, slot.box.w, slot.box.h);
    ImGui::SetNextWindowPos(ImVec2(slot.box.x, slot.box.y), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(slot.box.w, slot.box.h), ImGuiCond_Always);
    // One ImGui window per slot, named for the slot's place so that switching tabs does not
    // make a new window.
    // (The inside panel and the op strip keep the names their texts are recorded under.)
    const std::string own =
        slot.id == "inside" || slot.id == "ops" ? std::string(d->record) : std::string(d->id);
    const std::string name =
        std::string(tr(d->title)) + "###" + (slot.tabs.empty() ? own : "group-" + slot.tabs[0]);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                             ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoBringToFrontOnFocus;
    if (ui_.presenter) flags |= ImGuiWindowFlags_NoTitleBar;
    // The attention panel's notes may go after its heatmaps, a wheel's scroll away: no scrollbar
    // takes its width from the heatmaps (gui/panels/attention.cpp). Shown alone, its heatmaps may
    // be taller than the window at a large text: the scrollbar says so.
    if (slot.id == "attention" && ui_.maximised != "attention")
        flags |= ImGuiWindowFlags_NoScrollbar;
    // The Serving view's width does not change when its content grows past the window.
    if (slot.id == "serving") flags |= ImGuiWindowFlags_AlwaysVerticalScrollbar;
    // Shown alone, the panel is drawn as at a text alone_zoom_ times the window's: its title,
    // text and spacing alike (what gui/views/panel_layout.h measures it at).
    const bool zoomed = alone_zoom_ > 1 && slot.id == ui_.maximised;
    const float base_px = f.font_px;
    int pushed = 0;
    if (zoomed) {
        const ImGuiStyle& st = ImGui::GetStyle();
        const float z = alone_zoom_;
        for (auto [var, v] : {std::pair{ImGuiStyleVar_WindowPadding, st.WindowPadding},
                              std::pair{ImGuiStyleVar_FramePadding, st.FramePadding},
                              std::pair{ImGuiStyleVar_ItemSpacing, st.ItemSpacing},
                              std::pair{ImGuiStyleVar_ItemInnerSpacing, st.ItemInnerSpacing},
                              std::pair{ImGuiStyleVar_CellPadding, st.CellPadding}}) {
            ImGui::PushStyleVar(var, ImVec2(v.x * z, v.y * z));
            ++pushed;
        }
        for (auto [var, v] : {std::pair{ImGuiStyleVar_ScrollbarSize, st.ScrollbarSize},
                              std::pair{ImGuiStyleVar_GrabMinSize, st.GrabMinSize},
                              std::pair{ImGuiStyleVar_IndentSpacing, st.IndentSpacing}}) {
            ImGui::PushStyleVar(var, v * z);
            ++pushed;
        }
        ImGui::GetIO().FontGlobalScale = z;
        ImGui::PushFont(ImGui::GetFont());  // the font's size read again, scaled
        f.font_px = base_px * z;
    }
    ImGui::Begin(name.c_str(), nullptr, flags);
    // A double-click on the title bar maximises the panel, or restores the stage.
    ImGuiWindow* w = ImGui::GetCurrentWindow();
    if (!ui_.presenter && ImGui::IsMouseDoubleClicked(0) &&
        ImGui::IsMouseHoveringRect(w->TitleBarRect().Min, w->TitleBarRect().Max, false) &&
        ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem))
        toggle_maximise(slot.id);
    if (slot.tabs.size() > 1 &&
        ImGui::BeginTabBar("##tabs", ImGuiTabBarFlags_FittingPolicyScroll)) {
        for (const std::string& t : slot.tabs) {
            const PanelDef* td = panel_def(t);
            if (!td) continue;
            const std::string label = std::string(tr(td->title)) + "###tab-" + t;
            const bool shown = t == slot.id;
            if (ImGui::BeginTabItem(label.c_str(), nullptr,
                                    shown ? ImGuiTabItemFlags_SetSelected : 0)) {
                ImGui::EndTabItem();
            } else if (shown) {
                // not drawn this frame
            }
            if (ImGui::IsItemClicked() && !shown) {
                auto& c = ui_.chosen_tabs;
                c.erase(std::remove(c.begin(), c.end(), t), c.end());
                c.insert(c.begin(), t);
            }
        }
        ImGui::EndTabBar();
    }
    f.record_panel(d->record);
    draw_panel(f, slot.id);
    ImGui::End();
    if (zoomed) {
        ImGui::PopFont();
        ImGui::GetIO().FontGlobalScale = 1;
        ImGui::PopStyleVar(pushed);
        f.font_px = base_px;
    }
}

void App::draw_panels(FrameContext& f) {
    panel_rects_.clear();
    const ImVec2 vp = ImGui::GetMainViewport()->Size;
    const float fh = f.font_px;
    const float gap = 2;

    std::string maximised = ui_.maximised;
    const bool lesson_open = ui_.show_lesson;
    if ((maximised == "lesson" && !lesson_open) ||
        (maximised == "toy" && !(f.model() && f.model()->is_toy())))
        maximised.clear();
    // The inside panel and the op strip open when maximised (their keys open them).
    if (maximised == "inside") explain_.open = true;
    if (maximised == "ops") explain_.op_strip = true;

    // Toolbar across the top (not in presenter mode, nor in a panel's presenter view); its
    // height is what it needed last frame.
    toolbar_h_ = 0;
    // Large text on a small window wraps the full toolbar into many rows (at 1280x800 and text
    // 2, 45% of the height): past a fifth of the window's height the toolbar shows its stepping
    // row only, the rest behind its "More" button, so the stage keeps the room its graphics need.
    // The full height is measured whenever the full toolbar is drawn, and again (one full frame)
    // when the text size, the width or the language changes.
    const std::string full_key = std::to_string(fh) + "/" + std::to_string(vp.x) + "/" +
                                 lang_code(ui_.lang) + "/" + std::to_string(ui_.show_lesson);
    if (full_key != toolbar_full_key_) toolbar_full_h_ = 0;
    f.toolbar_compact = !ui_.toolbar_more && toolbar_full_h_ > vp.y / 5;
    if (!ui_.presenter && maximised.empty()) {
        ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
        ImGui::SetNextWindowSize(ImVec2(vp.x, 0), ImGuiCond_Always);
        ImGui::Begin("kvscope###toolbar", nullptr,
                     ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                         ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoTitleBar |
                         ImGuiWindowFlags_AlwaysAutoResize |
                         ImGuiWindowFlags_NoBringToFrontOnFocus);
        draw_toolbar(f, lesson_ui_);
        f.record_panel("toolbar");
        toolbar_h_ = ImGui::GetWindowSize().y + gap;
        if (!f.toolbar_compact) {
            toolbar_full_h_ = toolbar_h_;
            toolbar_full_key_ = full_key;
        }
        ImGui::End();
    }

    const float top = toolbar_h_;
    // Without a toolbar the messages of the moment take the right of a panel alone's title bar,
    // or a strip at the window's bottom while they show (the stage ends above it): they cover no
    // panel's contents.
    const float strip = toolbar_h_ > 0 ? 0 : message_strip_height(f);
    alone_zoom_ = 1;
    if (ui_.show_serving) {  // the Serving view takes the stage, beside the lesson column
        if (f.layout) f.layout->arrangement = "serving";
        StageInput in;
        in.stage = {0, top, vp.x, vp.y - top - strip};
        in.fh = fh;
        in.lesson = lesson_open;
        in.titles = !ui_.presenter;
        in.focus = {"serving"};
        in.focus_full = true;
        for (const StageSlot& slot : layout_stage(in).slots) draw_slot(f, slot);
        f.toolbar_bottom = top;
        draw_messages(f);
        draw_help(f);
        return;
    }
    StageInput in;
    in.stage = {0, top, vp.x, vp.y - top};
    in.fh = fh;
    in.views = std::max<int>(1, static_cast<int>(f.snap.sessions.size()));
    in.toy = f.model() && f.model()->is_toy();
    in.lesson = lesson_open;
    in.titles = !ui_.presenter;
    if (!f.snap.sessions.empty() && !f.snap.sessions[0].trace.empty())
        in.toy_rows = f.snap.sessions[0].trace.back().kv.len + 1;
    in.maximise = maximised;
    if (f.model()) in.kv_variants = static_cast<int>(kv_what_if(f.model()->config()).size());
    // Just opened, the inside panel is the tab shown where it is one (a small screen at a large
    // text), whichever tab was chosen before.
    if (explain_.open && !inside_was_open_) {
        auto& c = ui_.chosen_tabs;
        c.erase(std::remove(c.begin(), c.end(), std::string("inside")), c.end());
        c.insert(c.begin(), "inside");
    }
    inside_was_open_ = explain_.open;
    in.chosen = ui_.chosen_tabs;
    // The bands under the stage: the inside panel's diagram has a row per key of the row shown.
    in.inside = explain_.open;
    in.inside_keys = f.snap.sessions.empty() || f.snap.sessions[0].trace.empty()
                         ? 0
                         : f.snap.sessions[0].trace.back().kv.len;
    in.inside_views = in.views;
    in.ops = explain_.op_strip;
    // A lesson step may set the stage: the panels its @show names, as large as it says.
    f.lesson_stage = false;
    if (showing_lesson_step(f) && in.maximise.empty()) {
        std::string size;
        const auto ids = shown_panels(f.snap.lesson.panel, &size);
        if (!size.empty()) {
            in.focus = ids;
            in.focus_full =
                size == "full" || std::find(ids.begin(), ids.end(), "stage") != ids.end();
            f.lesson_stage = std::find(ids.begin(), ids.end(), "stage") != ids.end();
        }
    }
    StageLayout stage = layout_stage(in);
    std::optional<TitleBarRoom> title_bar;
    if (strip > 0) {
        // The title bar of the panel alone, its text zoomed as draw_slot draws it.
        if (stage.arrangement == Arrangement::Maximised && in.titles) {
            const PanelDef* d = panel_def(maximised);
            const ImGuiStyle& st = ImGui::GetStyle();
            const float z = stage.text_zoom;
            TitleBarRoom room;
            room.top = top;
            room.height = (fh + 2 * st.FramePadding.y) * z;
            room.from =
                (st.FramePadding.x + (d ? ImGui::CalcTextSize(tr(d->title)).x : 0)) * z + fh;
            if (messages_fit_title_bar(f, room)) title_bar = room;
        }
        if (!title_bar) {
            in.stage.h -= strip;
            stage = layout_stage(in);
        }
    }
    alone_zoom_ = stage.arrangement == Arrangement::Maximised ? stage.text_zoom : 1;
    f.caps = stage.caps;
    f.reference = stage.reference;
    if (f.layout) f.layout->arrangement = arrangement_name(stage.arrangement);
    for (const StageSlot& slot : stage.slots) draw_slot(f, slot);

    frame_shown_panel(f);
    f.toolbar_bottom = top;
    draw_messages(f, title_bar ? &*title_bar : nullptr);
    draw_help(f);
    draw_weight_types(f, weight_types_);
}

bool App::showing_lesson_step(const FrameContext& f) const {
    const LessonRun& run = f.snap.lesson;
    const LessonUi& L = lesson_ui_;
    return ui_.show_lesson && run.number == L.number && L.step == run.played() &&
           !run.panel.empty();
}

void App::frame_shown_panel(FrameContext& f) {
    // A lesson's @show: the panels it names get a frame in the highlight colour while its step
    // is the one shown.
    if (!showing_lesson_step(f)) return;
    for (const std::string& id : shown_panels(f.snap.lesson.panel, nullptr)) {
        const auto r = panel_rects_.find(id);
        if (r == panel_rects_.end()) continue;
        const ImVec4 v = r->second;
        const float t = std::max(2.0f, f.font_px * 0.18f);
        ImGui::GetForegroundDrawList()->AddRect(ImVec2(v.x + t * 0.5f, v.y + t * 0.5f),
                                                ImVec2(v.x + v.z - t * 0.5f, v.y + v.w - t * 0.5f),
                                                to_u32(f.pal.highlight), 4, 0, t);
    }
    if (f.layout) f.layout->lesson.shown_panel = f.snap.lesson.panel;
}

void App::frame(const std::string& screenshot, LayoutRecord* layout) {
    const float scale = ui_.settings.font_scale;
    if (scale != fonts_scale_) {
        fonts_ = load_fonts(scale, glyph_text() + ui_.prompt, cjk_ranges_);
        ui_.font_notice = fonts_.notice;
        ui_.font_notice_until = ImGui::GetTime() + 8;
        fonts_scale_ = scale;
        theme_name_.clear();  // sizes scale with the text
    }
    // Chinese only where its font is there (else the notice says why).
    ui_.lang = ui_.settings.lang == "zh" && fonts_.chinese ? Lang::Zh : Lang::En;
    set_language(ui_.lang);
    if (theme_name_ != ui_.settings.theme) {
        theme_ = apply_theme(ui_.settings.theme != "light", scale);
        theme_name_ = ui_.settings.theme;
    }
    if (toggle_fullscreen_) {
        window_.toggle_fullscreen();
        toggle_fullscreen_ = false;
    }

    if (!time_each_op_) time_each_op_ = explain_.op_strip;
    if (explain_.op_strip != *time_each_op_) {
        time_each_op_ = explain_.op_strip;
        worker_.set_time_each_op(explain_.op_strip);
    }

    const auto t0 = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // Headless frames must not depend on where the (virtual) pointer happens to be.
    if (headless_) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    {
        auto lock = worker_.lock();
        const EngineSnapshot& snap = worker_.snapshot();
        if (snap.error_serial != seen_error_serial_) {
            seen_error_serial_ = snap.error_serial;
            ui_.playing = false;
            ui_.error_until = ImGui::GetTime() + 10;
        }
        if (snap.generation != seen_generation_) {
            seen_generation_ = snap.generation;
            ui_.view_step = -1;
        }
        follow_engine(snap);
        FrameContext f{worker_,
                       snap,
                       ui_,
                       theme_,
                       palette_for(theme_.dark, weight_scale_from(ui_.settings.weight_scale)),
                       textures_,
                       layout};
        f.font_px = fonts_.size_px;
        f.mono = fonts_.mono;
        f.bold = fonts_.bold;
        const int n = snap.steps();
        f.step = n == 0 ? -1 : ui_.view_step < 0 ? n - 1 : std::min(ui_.view_step, n - 1);
        if (layout) {
            layout->clear_frame();
            layout->model = snap.model ? snap.model->name() : "";
            layout->theme = ui_.settings.theme;
            layout->backend = snap.backend_name;
            layout->step = f.step;
            layout->steps = n;
            layout->mask = f.pal.mask;
            layout->missing = f.pal.missing;
            layout->empty_row = f.pal.empty_row;
            layout->highlight = f.pal.highlight;
            layout->recomputed = f.pal.recomputed;
            auto byte = [](float v) { return static_cast<std::uint8_t>(std::lround(v * 255)); };
            layout->background = {byte(theme_.clear.x), byte(theme_.clear.y), byte(theme_.clear.z),
                                  255};
            layout->lang = lang_code(ui_.lang);
            layout->font_dejavu = fonts_.dejavu;
            layout->font_chinese = fonts_.chinese;
            if (fonts_.chinese) layout->missing_glyphs = missing_glyphs();
        }
        follow_lesson_serve(f, serving_, ui_.show_lesson, ui_.show_serving);
        handle_keys(f);
        play(f);
        draw_panels(f);
    }
    ImGui::Render();
    build_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    int fw = 0, fhgt = 0;
    window_.framebuffer_size(fw, fhgt);
    if (layout) {
        record_text(*layout);
        const ImVec2 ds = ImGui::GetIO().DisplaySize;
        layout->width = fw;
        layout->height = fhgt;
        layout->scale_x = ds.x > 0 ? fw / ds.x : 1;
        layout->scale_y = ds.y > 0 ? fhgt / ds.y : 1;
    }
    if (!draw_pixels_ && screenshot.empty() && !want_screenshot_) return;
    glViewport(0, 0, fw, fhgt);
    glClearColor(theme_.clear.x, theme_.clear.y, theme_.clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!screenshot.empty()) save_framebuffer(screenshot, fw, fhgt);
    if (want_screenshot_) {
        want_screenshot_ = false;
        const std::string path = timestamped_png();
        try {
            save_framebuffer(path, fw, fhgt);
            ui_.notice = std::string(tr("saved")) + " " + path;
            platform_.screenshot_saved(path);
        } catch (const Error& e) {
            ui_.notice = e.what();
        }
        ui_.notice_until = ImGui::GetTime() + 4;
    }
    glfwSwapBuffers(window_.handle());
}

}  // namespace kvs::gui
