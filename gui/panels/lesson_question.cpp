// A lesson step's question (@ask, lessonlib/lesson_ask.h), predict then reveal: before the step
// runs, the question with its choices (keys 1-4) or a number field (digits, Enter); once answered,
// the learner's answer beside the engine's, marked right or not, with the one-line why. The
// engine plays the step only when the answer is given (open_lesson waits for it).
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gui/draw/text.h"
#include "gui/panels/lesson.h"
#include "gui/state/strings.h"

namespace kvs::gui {
namespace {

const Directive* shown_ask(UiState& ui, LessonUi& L, std::shared_ptr<const Lesson>& keep) {
    if (!ui.show_lesson || L.number == 0) return nullptr;
    keep = L.catalog.lesson(L.number, ui.lang);
    if (!keep || L.step < 0 || L.step >= static_cast<int>(keep->steps.size())) return nullptr;
    return keep->steps[L.step].ask();
}

const LessonLogEntry* ask_entry(const StepOutcome* out) {
    if (!out) return nullptr;
    for (const auto& e : out->log)
        if (e.kind == LessonLogEntry::Kind::Ask) return &e;
    return nullptr;
}

}  // namespace

bool lesson_question_waits(UiState& ui, LessonUi& L) {
    std::shared_ptr<const Lesson> keep;
    return shown_ask(ui, L, keep) && !L.answers.count(L.step);
}

void answer_lesson_question(UiState& ui, LessonUi& L, EngineWorker& worker,
                            const LearnerAnswer& a) {
    L.answers[L.step] = a;
    L.typed.clear();
    open_lesson(ui, L, worker, L.number, L.step);
}

bool lesson_question_key(FrameContext& f, LessonUi& L, int key) {
    std::shared_ptr<const Lesson> keep;
    const Directive* d = shown_ask(f.ui, L, keep);
    if (!d || L.answers.count(L.step)) return false;
    const AskSpec& a = d->ask;
    std::string& typed = L.typed;
    const int n = static_cast<int>(a.choices.size());
    int digit = -1;
    if (key >= GLFW_KEY_0 && key <= GLFW_KEY_9) digit = key - GLFW_KEY_0;
    if (key >= GLFW_KEY_KP_0 && key <= GLFW_KEY_KP_9) digit = key - GLFW_KEY_KP_0;
    const bool enter = key == GLFW_KEY_ENTER || key == GLFW_KEY_KP_ENTER;
    if (n > 0) {
        if (digit >= 1 && digit <= n) {
            LearnerAnswer l;
            l.choice = digit - 1;
            answer_lesson_question(f.ui, L, f.worker, l);
            return true;
        }
        if (enter) {
            answer_lesson_question(f.ui, L, f.worker, {});
            return true;
        }
        return digit >= 0;  // another digit: not a choice, and not a panel key while asking
    }
    if (digit >= 0 && typed.size() < 24) {
        typed += static_cast<char>('0' + digit);
        return true;
    }
    if ((key == GLFW_KEY_PERIOD || key == GLFW_KEY_KP_DECIMAL) &&
        typed.find('.') == std::string::npos) {
        typed += '.';
        return true;
    }
    if ((key == GLFW_KEY_MINUS || key == GLFW_KEY_KP_SUBTRACT) && typed.empty()) {
        typed.push_back('-');  // typed is empty here
        return true;
    }
    if (key == GLFW_KEY_BACKSPACE) {
        if (!typed.empty()) typed.pop_back();
        return true;
    }
    if (enter) {
        LearnerAnswer l;
        char* end = nullptr;
        const double v = std::strtod(typed.c_str(), &end);
        if (!typed.empty() && typed != "-" && end == typed.c_str() + typed.size()) {
            l.typed = true;
            l.number = v;
        }
        answer_lesson_question(f.ui, L, f.worker, l);
        return true;
    }
    return false;
}

void draw_lesson_question(FrameContext& f, LessonUi& L, const LessonStep& step,
                          const StepOutcome* out, LessonRecord* rec, const MdStyle& style) {
    const Directive* d = step.ask();
    if (!d) return;
    const AskSpec& a = d->ask;
    const ReportLang lang = report_lang(f.ui.lang);
    const float fh = f.font_px;
    const auto it = L.answers.find(L.step);
    const bool waits = it == L.answers.end();
    const float width = ImGui::GetContentRegionAvail().x;
    // While it waits, one line says what to do: "Predict: <question>", in the heading colour.
    draw_md_line(parse_inline(waits ? std::string(tr("Predict: ")) + a.question : a.question),
                 style, width, waits ? style.heading : style.text, 1.0f, true);
    if (rec) rec->ask_question = a.question;
    if (waits) {
        if (rec) rec->ask = "asking";
        if (!a.choices.empty()) {
            // Left-aligned, key first, as the CLI prints them: "2)  4".
            // As many to a row as fit the width side by side, each cell as wide as the widest
            // (short answers, numbers or yes and no, in one row), else one a row.
            ImGui::PushStyleVar(ImGuiStyleVar_ButtonTextAlign, ImVec2(0.0f, 0.5f));
            const int n = static_cast<int>(a.choices.size());
            const float sp = ImGui::GetStyle().ItemSpacing.x;
            std::vector<std::string> labels;
            float widest = 0;
            for (int i = 0; i < n; ++i) {
                labels.push_back(std::to_string(i + 1) + ")  " + ask_choice_words(a, i, lang));
                widest = std::max(widest, ImGui::CalcTextSize(labels.back().c_str()).x +
                                              ImGui::GetStyle().FramePadding.x * 2 + fh);
            }
            int per_row = std::max(n, 1);
            while (per_row > 1 && (width - sp * (per_row - 1)) / per_row < widest) --per_row;
            const float each = per_row > 1 ? (width - sp * (per_row - 1)) / per_row : -1;
            for (int i = 0; i < n; ++i) {
                const std::string& label = labels[i];
                ImGui::PushID(i);
                if (i % per_row != 0) ImGui::SameLine();
                if (ImGui::Button(label.c_str(), ImVec2(each, 0))) {
                    LearnerAnswer l;
                    l.choice = i;
                    answer_lesson_question(f.ui, L, f.worker, l);
                }
                ImGui::PopID();
            }
            ImGui::PopStyleVar();
            // Wrapped as the lesson text is: between words, and between Chinese characters.
            draw_md_line(parse_inline(tr("Keys 1-4 answer, Enter alone skips; then the step "
                                         "runs.")),
                         style, width, style.muted);
        } else {
            // The number as typed, with a caret, in a frame like a text field's.
            const std::string shown = L.typed + "_";
            const ImVec2 p = ImGui::GetCursorScreenPos();
            const ImVec2 sz(std::min(ImGui::GetContentRegionAvail().x, fh * 12),
                            ImGui::GetFrameHeight());
            ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + sz.x, p.y + sz.y),
                                                      ImGui::GetColorU32(ImGuiCol_FrameBg), 4);
            put_text(ImVec2(p.x + ImGui::GetStyle().FramePadding.x,
                            p.y + ImGui::GetStyle().FramePadding.y),
                     ImGui::GetColorU32(ImGuiCol_Text), shown);
            ImGui::Dummy(sz);
            draw_md_line(parse_inline(tr("Type a number and Enter, Enter alone skips; then "
                                         "the step runs.")),
                         style, width, style.muted);
        }
        return;
    }
    const LearnerAnswer& mine = it->second;
    const std::string mine_words = learner_answer_words(a, mine, lang);
    if (rec) rec->ask_learner = mine_words;
    const LessonLogEntry* e = ask_entry(out);
    // Compact, so it stays in view beside the checks: the learner's answer and whether it is the
    // engine's, then the engine's answer, then why.
    ImGui::Text(tr("Your answer: %s"), mine_words.empty() ? tr("none given") : mine_words.c_str());
    if (!e) {
        if (rec) rec->ask = "playing";
        ImGui::PushStyleColor(ImGuiCol_Text, f.theme.muted_text);
        ImGui::TextUnformatted(tr("the engine is playing this step"));
        ImGui::PopStyleColor();
        return;
    }
    const std::string engine =
        e->answer.is_none() ? e->lines.front() : ask_answer_words(a, e->answer, lang);
    const bool right = mine.given() && learner_is_right(a, e->answer, mine);
    if (rec) {
        rec->ask = "revealed";
        rec->ask_engine = engine;
        rec->ask_right = mine.given() ? (right ? 1 : 0) : -1;
    }
    if (mine.given()) {
        const bool marks = ImGui::GetFont()->FindGlyphNoFallback(0x2713) != nullptr;
        ImGui::SameLine(0, fh * 0.6f);
        ImGui::PushStyleColor(ImGuiCol_Text, right ? f.theme.ok_text : f.theme.error_text);
        const std::string mark =
            std::string(right ? (marks ? "\xE2\x9C\x93 " : "") : (marks ? "\xE2\x9C\x97 " : "")) +
            ask_verdict_words(right, lang);
        ImGui::TextUnformatted(mark.c_str());
        ImGui::PopStyleColor();
    }
    // The answer in bold, as lesson text is: the bold font has no Chinese (是, 否, 遇到结束 token),
    // which draw_md_line draws twice instead, a fraction of a pixel apart. Spans built here: no
    // markup is read from the answer (a token may be "*").
    const MdLine engine_line = {{tr("The engine: "), false, false, false},
                                {engine, true, false, false}};
    draw_md_line(engine_line, style, width, style.text);
    std::string why = tr("Why: %s");
    why.replace(why.find("%s"), 2, a.why);
    draw_md_line(parse_inline(why), style, width, style.text);
    ImGui::Separator();
}

}  // namespace kvs::gui
