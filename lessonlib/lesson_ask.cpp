#include "lessonlib/lesson_ask.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/util/error.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/metric_words.h"

namespace kvs {
namespace {

std::string trim(const std::string& s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

// Where `key` starts a word outside "quotes", or npos.
std::size_t find_key(const std::string& s, const std::string& key) {
    bool quoted = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '"') quoted = !quoted;
        if (quoted || s.compare(i, key.size(), key) != 0) continue;
        if (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1]))) return i;
    }
    return std::string::npos;
}

LessonValue choice_value(const std::string& item) {
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"')
        return LessonValue::string(item.substr(1, item.size() - 2));
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v))
        throw Error("@ask: choice '" + item + "' is not a number, a \"string\", yes or no");
    return LessonValue::number(v);
}

std::vector<std::string> split_choices(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : s) {
        if (c == '"') quoted = !quoted;
        if (c == '|' && !quoted) {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted) throw Error("@ask: unterminated string in choices=");
    out.push_back(trim(cur));
    return out;
}

bool same(const LessonValue& a, const LessonValue& b) {
    if (a.is_number() && b.is_number())
        return std::fabs(a.num - b.num) <= 1e-9 * std::max(1.0, std::fabs(b.num));
    return a.kind == b.kind && a.str == b.str;
}

}  // namespace

AskSpec parse_ask(const std::string& args) {
    AskSpec a;
    const std::size_t c = find_key(args, "choices="), w = find_key(args, "within=");
    const std::size_t first = std::min(c, w);
    const std::string expr = trim(args.substr(0, first));
    if (expr.empty())
        throw Error(
            "@ask needs the engine's answer as an expression, e.g. @ask rows choices=1 | 4 | 5");
    a.answer = LessonExpr::parse(expr, validate_lesson_metric);
    if (a.answer.is_comparison() && c == std::string::npos)
        throw Error("@ask: a comparison's answer is yes or no: add choices=yes | no");
    if (c != std::string::npos) {
        const std::size_t end = w != std::string::npos && w > c ? w : args.size();
        const auto items = split_choices(args.substr(c + 8, end - c - 8));
        if (items.size() < 2 || items.size() > 4)
            throw Error("@ask: choices= takes 2 to 4 choices separated by | (keys 1-4)");
        a.yes_no = items.size() == 2 && ((items[0] == "yes" && items[1] == "no") ||
                                         (items[0] == "no" && items[1] == "yes"));
        for (const auto& item : items) {
            if (item == "yes" || item == "no") {
                if (!a.yes_no) throw Error("@ask: yes and no are the only choices when one is");
                a.choices.push_back(LessonValue::number(item == "yes" ? 1 : 0));
                continue;
            }
            a.choices.push_back(choice_value(item));
            for (std::size_t k = 0; k + 1 < a.choices.size(); ++k)
                if (same(a.choices[k], a.choices.back()))
                    throw Error("@ask: choice '" + item + "' is given twice");
        }
    }
    if (w != std::string::npos) {
        if (c != std::string::npos)
            throw Error("@ask: within= goes with a typed number, not choices");
        const std::size_t end = c != std::string::npos && c > w ? c : args.size();
        const std::string t = trim(args.substr(w + 7, end - w - 7));
        char* stop = nullptr;
        a.within = std::strtod(t.c_str(), &stop);
        if (t.empty() || stop != t.c_str() + t.size() || !(a.within >= 0) ||
            !std::isfinite(a.within))
            throw Error("@ask: within=" + t + " is not a number of 0 or more");
    }
    return a;
}

int ask_choice_of(const AskSpec& a, const LessonValue& answer) {
    for (std::size_t i = 0; i < a.choices.size(); ++i)
        if (same(a.choices[i], answer)) return static_cast<int>(i);
    return -1;
}

std::string ask_choice_words(const AskSpec& a, int i, ReportLang lang) {
    if (i < 0 || i >= static_cast<int>(a.choices.size())) return {};
    return ask_answer_words(a, a.choices[static_cast<std::size_t>(i)], lang);
}

std::string ask_choices_line(const AskSpec& a, ReportLang lang) {
    std::string line;
    for (int i = 0; i < static_cast<int>(a.choices.size()); ++i)
        line += (i ? "  " : "") + std::to_string(i + 1) + ") " + ask_choice_words(a, i, lang);
    return line;
}

std::string ask_answer_words(const AskSpec& a, const LessonValue& answer, ReportLang lang) {
    const Words w{lang};
    if (a.yes_no && answer.is_number() && (answer.num == 1 || answer.num == 0))
        return answer.num == 1 ? w("yes", "是") : w("no", "否");
    return value_words(a.answer.metric(), a.answer.metric_arg(), answer, lang);
}

bool learner_is_right(const AskSpec& a, const LessonValue& answer, const LearnerAnswer& l) {
    if (l.choice >= 0)
        return l.choice < static_cast<int>(a.choices.size()) &&
               same(a.choices[static_cast<std::size_t>(l.choice)], answer);
    if (!l.typed || !answer.is_number()) return false;
    // What the reveal prints is the answer to 6 significant digits: typing that is right.
    const double shown = std::strtod(answer.to_string().c_str(), nullptr);  // never throws
    const double tol = std::max(a.within, std::fabs(shown - answer.num));
    return std::fabs(l.number - answer.num) <= tol + 1e-12 * std::max(1.0, std::fabs(answer.num));
}

bool learner_answer_from(const AskSpec& a, const std::string& text, LearnerAnswer& out) {
    const std::string t = trim(text);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return false;
    const int n = static_cast<int>(a.choices.size());
    LearnerAnswer l;
    if (n > 0) {
        if (v != std::floor(v) || v < 1 || v > n) return false;
        l.choice = static_cast<int>(v) - 1;
    } else {
        l.typed = true;
        l.number = v;
    }
    out = l;
    return true;
}

std::string ask_answer_hint(const AskSpec& a, ReportLang lang) {
    const Words w{lang};
    const std::string n = std::to_string(a.choices.size());
    if (a.choices.empty()) return w("a number", "一个数");
    return w.zh() ? "1 到 " + n + " 之间的一个选项" : "a choice from 1 to " + n;
}

std::string learner_answer_words(const AskSpec& a, const LearnerAnswer& l, ReportLang lang) {
    if (l.choice >= 0) return ask_choice_words(a, l.choice, lang);
    if (l.typed) return LessonValue::number(l.number).to_string();
    return {};
}

const char* ask_verdict_words(bool right, ReportLang lang) {
    const Words w{lang};
    return right ? w("you predicted it", "你猜对了")
                 : w("not what you predicted", "和你的预测不同");
}

}  // namespace kvs
