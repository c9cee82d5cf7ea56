// Lessons stay true: every number a lesson's prose states is one the engine printed or a check
// read while the step, or a step before it, played (its log: counts, measured figures, each
// @expect's two sides, the @ask's answer), or one written in those steps' directives (an @expect's
// constant, a @scale's context), up to rounding and a unit prefix (28.7 MFLOP, 2 GiB, 4.66 ms, 13.1
// 万). Whole numbers up to 10 count what the reader sees (position 4, head 2, layer 1); the few
// numbers that come from elsewhere are listed below with where they come from (the seed tutorials'
// own figures), and dates. A sentence that states a figure nothing checks fails here.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "kernels/backend_factory.h"
#include "kernels/gpu_step_probe.h"
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_parser.h"
#include "lessonlib/lesson_player.h"
#include "lessonlib/session_lesson_target.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

// Numbers a lesson may state without the engine: the seeds' own figures it quotes, and dates.
struct Allowed {
    const char* text;  // as the prose writes it
    const char* why;
};
const Allowed kAllowed[] = {
    {"100,000", "seeds 002 and 004: a prompt of 100,000 tokens read one token at a time"},
    {"10 万", "the same figure in Chinese (100,000)"},
};

struct Number {
    std::string text;  // as written
    double value = 0;
    int digits = 0;  // significant digits written
};

bool ascii_word(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Prose without code: fenced blocks and `inline code` name files, commands and formulas.
std::string without_code(const std::string& md) {
    std::string out;
    bool fence = false, tick = false;
    std::size_t line = 0;
    for (std::size_t i = 0; i < md.size(); ++i) {
        if (i == line) {
            if (md.compare(i, 3, "```") == 0 || md.compare(i, 3, "~~~") == 0) fence = !fence;
            const auto nl = md.find('\n', i);
            line = nl == std::string::npos ? md.size() : nl + 1;
        }
        if (fence) continue;
        if (md[i] == '`') {
            tick = !tick;
            out += ' ';
            continue;
        }
        out += tick ? ' ' : md[i];
    }
    return out;
}

// The numbers a text states: 3, 28.7, 6,738,415,616, 1e-6, 13.1 万. In prose a digit run glued
// to a letter is a name (H100, 7B, w1, Q4_0, bf16), not a figure; in what the engine printed
// (`printed`) a unit may follow without a space (82.2GB, 8.70 MFLOP).
std::vector<Number> numbers_in(const std::string& t, bool printed = false) {
    std::vector<Number> out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(t[i]))) continue;
        if (i > 0 && (ascii_word(t[i - 1]) || t[i - 1] == '.')) {
            while (i < t.size() && (ascii_word(t[i]) || t[i] == '.')) ++i;
            continue;
        }
        std::size_t j = i;
        std::string digits;
        while (j < t.size() &&
               (std::isdigit(static_cast<unsigned char>(t[j])) ||
                (t[j] == ',' && j + 3 < t.size() + 0 && j + 3 <= t.size() &&
                 std::isdigit(static_cast<unsigned char>(t[j + 1])) &&
                 std::isdigit(static_cast<unsigned char>(t[j + 2])) &&
                 std::isdigit(static_cast<unsigned char>(t[j + 3])) &&
                 (j + 4 >= t.size() || !std::isdigit(static_cast<unsigned char>(t[j + 4])))))) {
            if (t[j] != ',') digits += t[j];
            ++j;
        }
        std::string frac;
        if (j + 1 < t.size() && t[j] == '.' && std::isdigit(static_cast<unsigned char>(t[j + 1]))) {
            ++j;
            while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) frac += t[j++];
        }
        int exp10 = 0;
        if (j + 1 < t.size() && (t[j] == 'e' || t[j] == 'E') &&
            (std::isdigit(static_cast<unsigned char>(t[j + 1])) || t[j + 1] == '-')) {
            std::size_t k = j + 1;
            const bool neg = t[k] == '-';
            if (neg) ++k;
            std::string e;
            while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) e += t[k++];
            if (!e.empty()) {
                exp10 = (neg ? -1 : 1) * std::stoi(e);
                j = k;
            }
        }
        if (!printed && j < t.size() && (ascii_word(t[j]) && !(t[j] == 'x' || t[j] == 'X'))) {
            while (j < t.size() && (ascii_word(t[j]) || t[j] == '.')) ++j;
            i = j;
            continue;
        }
        Number n;
        n.text = t.substr(i, j - i);
        n.value = std::stod(digits + (frac.empty() ? "" : "." + frac)) * std::pow(10.0, exp10);
        std::string sig = digits + frac;
        sig.erase(0, std::min(sig.find_first_not_of('0'), sig.size()));
        if (frac.empty())
            while (sig.size() > 1 && sig.back() == '0') sig.pop_back();
        n.digits = std::max<int>(1, static_cast<int>(sig.size()));
        // Chinese counts in 万 (10^4) and 亿 (10^8).
        std::size_t k = j;
        while (k < t.size() && t[k] == ' ') ++k;
        if (t.compare(k, 3, "\xE4\xB8\x87") == 0) n.value *= 1e4;  // 万
        if (t.compare(k, 3, "\xE4\xBA\xBF") == 0) n.value *= 1e8;  // 亿
        out.push_back(n);
        i = j;
    }
    return out;
}

double round_sig(double v, int digits) {
    if (v == 0) return 0;
    const double m = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(v))));
    return std::round(v * m) / m;
}

// Whether `p` is `v` rounded to p's digits, in some unit: 1, k/M/G/T (and milli, micro, nano),
// Ki/Mi/Gi, percent.
bool states(const Number& p, double v) {
    v = std::fabs(v);
    if (!std::isfinite(v) || v == 0) return p.value == 0 && v == 0;
    std::vector<double> units = {1, 100, 0.01};
    for (int k = 1; k <= 4; ++k) {
        units.push_back(std::pow(1000.0, k));
        units.push_back(std::pow(1000.0, -k));
        units.push_back(std::pow(1024.0, k));
        units.push_back(std::pow(1024.0, -k));
    }
    for (double u : units) {
        const double r = round_sig(v / u, p.digits);
        if (std::fabs(r - p.value) <= 1e-9 * std::max(1.0, p.value)) return true;
    }
    return false;
}

struct Uncovered {
    std::string where, text, sentence;
};

// The text of one step a reader sees: its title, prose, and its question and why.
std::string step_text(const LessonStep& s) {
    std::string t = s.title + "\n" + s.prose + "\n";
    if (const Directive* a = s.ask()) t += a->ask.question + "\n" + a->ask.why + "\n";
    return t;
}

std::string around(const std::string& text, const std::string& n) {
    const auto at = text.find(n);
    if (at == std::string::npos) return {};
    const std::size_t a = at > 50 ? at - 50 : 0;
    std::string s = text.substr(a, 100 + n.size());
    for (char& c : s)
        if (c == '\n') c = ' ';
    return s;
}

std::vector<Uncovered> uncovered_numbers(const std::string& path) {
    const Lesson lesson = load_lesson(path);
    BackendChoice be = make_backend("cpu");
    SessionLessonTarget target(*be.backend);
    target.set_gpu_probe(
        [](const Model& m, const std::vector<int>& p) { return probe_gpu_step(m, p, 4); });
    target.restart();
    std::vector<std::vector<double>> covered(lesson.steps.size());
    std::vector<double> all;
    for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
        const StepOutcome o = play_step(lesson, static_cast<int>(k), target);
        std::string said;
        for (const auto& d : lesson.steps[k].directives) said += d.text + "\n";
        for (const auto& e : o.log)
            for (const auto& l : e.lines)
                // An @ask's log ends with its own why: a why's figures must come from elsewhere.
                if (e.kind != LessonLogEntry::Kind::Ask || &l != &e.lines.back()) said += l + "\n";
        // What a step printed stays true for the steps after it (lesson 9 quotes the ridge point
        // its first @scale printed).
        for (const Number& n : numbers_in(said, true)) all.push_back(n.value);
        covered[k] = all;
        if (o.error) break;
    }
    std::vector<Uncovered> out;
    auto check = [&](const std::string& where, const std::string& text,
                     const std::vector<double>& values) {
        const std::string prose = without_code(text);
        for (const Number& n : numbers_in(prose)) {
            bool ok = false;
            for (double v : values) ok = ok || states(n, v);
            for (const Allowed& a : kAllowed)
                ok = ok || prose.find(a.text) != std::string::npos &&
                               numbers_in(a.text)[0].value == n.value;
            // Whole numbers up to 10 count things the reader sees (positions, heads, layers,
            // steps, "1 against T"); a year or a date (2026-11-26) is not a figure.
            ok = ok || (n.value <= 10 && n.value == std::floor(n.value) &&
                        n.text.find('.') == std::string::npos);
            ok = ok || (n.digits <= 4 && n.value >= 1900 && n.value <= 2100 &&
                        n.value == std::floor(n.value));
            if (!ok) out.push_back({where, n.text, around(prose, n.text)});
        }
    };
    check(lesson.file + ": title and intro", lesson.title + "\n" + lesson.intro, all);
    for (std::size_t k = 0; k < lesson.steps.size(); ++k)
        check(
            lesson.file + ": step " + std::to_string(k + 1) + " \"" + lesson.steps[k].title + "\"",
            step_text(lesson.steps[k]), covered[k]);
    return out;
}

}  // namespace

TEST_CASE("the number scanner reads figures and leaves names alone", "[lesson][numbers]") {
    std::vector<std::string> seen;
    for (const auto& n : numbers_in("H100 has 80 GB; 6,738,415,616 weights, 1e-6, 7B, 4.66 ms, "
                                    "w1, 13.1 \xE4\xB8\x87 (2x)"))
        seen.push_back(n.text);
    CHECK(seen == std::vector<std::string>{"80", "6,738,415,616", "1e-6", "4.66", "13.1", "2"});
    const auto wan = numbers_in("13.1 \xE4\xB8\x87");
    REQUIRE(wan.size() == 1);
    CHECK(wan[0].value == 131000);
    CHECK(states(wan[0], 131072));
    CHECK_FALSE(states(numbers_in("12.8 \xE4\xB8\x87")[0], 131072));  // 128,000: off by 2.3%
    CHECK(states(numbers_in("2 GiB")[0], 2147483648.0));
    CHECK(states(numbers_in("4.66 ms")[0], 0.004664));
    CHECK_FALSE(states(numbers_in("82 GB")[0], 85.9e9));
    CHECK(without_code("a `x = 12` b") == "a          b");
}

TEST_CASE("every number a lesson states comes from the engine or a check", "[lesson][numbers]") {
    std::vector<Uncovered> bad;
    for (const std::string lang : {"en", "zh"})
        for (const auto& f : list_lessons(lang)) {
            const auto u = uncovered_numbers(f.path);
            bad.insert(bad.end(), u.begin(), u.end());
        }
    std::string list;
    for (const auto& u : bad) list += u.where + ": " + u.text + "  ...  " + u.sentence + "\n";
    INFO(bad.size() << " numbers nothing checks:\n" << list);
    CHECK(bad.empty());
}
