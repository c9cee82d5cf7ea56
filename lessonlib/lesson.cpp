#include "lessonlib/lesson.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/model/kv_quant.h"
#include "core/util/closest_name.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/text_file.h"
#include "lessonlib/lesson_ask.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/scale_accounting.h"

namespace kvs {
namespace {

struct DirectiveName {
    const char* name;
    DirectiveKind kind;
};
constexpr DirectiveName kNames[] = {
    {"model", DirectiveKind::Model},     {"prompt", DirectiveKind::Prompt},
    {"limit", DirectiveKind::Limit},     {"cache", DirectiveKind::Cache},
    {"prefill", DirectiveKind::Prefill}, {"decode", DirectiveKind::Decode},
    {"reset", DirectiveKind::Reset},     {"highlight", DirectiveKind::Highlight},
    {"explain", DirectiveKind::Explain}, {"show", DirectiveKind::Show},
    {"whatif", DirectiveKind::WhatIf},   {"batch", DirectiveKind::Batch},
    {"scale", DirectiveKind::Scale},     {"gpu", DirectiveKind::Gpu},
    {"serve", DirectiveKind::Serve},     {"ask", DirectiveKind::Ask},
    {"expect", DirectiveKind::Expect},
};
// The lines that carry an @ask's words (translated, unlike the directives).
constexpr const char* kAskParts[] = {"question", "why"};

std::string trim(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return std::string(s.substr(a, b - a));
}

// Whole non-negative number, or nothing.
bool parse_int(const std::string& s, int& out) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = std::atoi(s.c_str());
    return true;
}

// key=value pairs; a value may be "quoted", and prompts= takes "A" | "B" | ... to the end.
std::map<std::string, std::string> key_values(const std::string& args,
                                              std::vector<std::string>* prompts) {
    std::map<std::string, std::string> kv;
    std::size_t i = 0;
    auto skip_space = [&] {
        while (i < args.size() && std::isspace(static_cast<unsigned char>(args[i]))) ++i;
    };
    auto quoted = [&]() {
        const auto close = args.find('"', i + 1);
        if (close == std::string::npos) throw Error("unterminated string");
        std::string v = args.substr(i + 1, close - i - 1);
        i = close + 1;
        return v;
    };
    for (skip_space(); i < args.size(); skip_space()) {
        const auto eq = args.find('=', i);
        const auto sp = args.find_first_of(" \t", i);
        if (eq == std::string::npos || (sp != std::string::npos && sp < eq))
            throw Error("expected key=value, got '" +
                        args.substr(i, sp == std::string::npos ? std::string::npos : sp - i) + "'");
        const std::string key = args.substr(i, eq - i);
        if (kv.count(key)) throw Error("'" + key + "' given twice");
        i = eq + 1;
        if (key == "prompts" && prompts) {
            for (;;) {
                skip_space();
                if (i >= args.size() || args[i] != '"')
                    throw Error("prompts= takes \"quoted\" prompts separated by |");
                prompts->push_back(quoted());
                skip_space();
                if (i >= args.size()) break;
                if (args[i] != '|') throw Error("expected | between prompts");
                ++i;
            }
            kv[key] = "";
            continue;
        }
        if (i < args.size() && args[i] == '"') {
            kv[key] = quoted();
        } else {
            const auto end = args.find_first_of(" \t", i);
            kv[key] = args.substr(i, end == std::string::npos ? std::string::npos : end - i);
            i = end == std::string::npos ? args.size() : end;
        }
    }
    return kv;
}

void only_keys(const std::map<std::string, std::string>& kv,
               std::initializer_list<const char*> allowed) {
    for (const auto& [k, v] : kv) {
        bool ok = false;
        std::string list;
        for (const char* a : allowed) {
            ok = ok || k == a;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        if (!ok) throw Error("unknown key '" + k + "' (known: " + list + ")");
    }
}

int int_value(const std::map<std::string, std::string>& kv, const char* key, int fallback, int lo,
              int hi) {
    const auto it = kv.find(key);
    if (it == kv.end()) {
        if (fallback < lo) throw Error(std::string("missing ") + key + "=N");
        return fallback;
    }
    int v = 0;
    if (!parse_int(it->second, v) || v < lo || v > hi)
        throw Error(std::string(key) + "=" + it->second + " is not a whole number in " +
                    std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

void parse_arguments(Directive& d, const std::string& args) {
    auto no_args = [&] {
        if (!args.empty())
            throw Error(std::string("@") + directive_name(d.kind) + " takes no arguments");
    };
    switch (d.kind) {
        case DirectiveKind::Model:
            if (args.empty())
                throw Error("@model needs a name: toy, default, stories260K or a path");
            d.arg = args;
            break;
        case DirectiveKind::Prompt:
            d.arg = args;
            // Quotes keep leading or trailing spaces.
            if (d.arg.size() >= 2 && d.arg.front() == '"' && d.arg.back() == '"')
                d.arg = d.arg.substr(1, d.arg.size() - 2);
            if (d.arg.empty()) throw Error("@prompt needs text");
            break;
        case DirectiveKind::Limit:
            if (!parse_int(args, d.n) || d.n < 1)
                throw Error("@limit needs a whole number of new tokens (1 or more)");
            break;
        case DirectiveKind::Cache:
            if (const auto c = parse_cache_view(args))
                d.cache = *c;
            else
                throw Error("@cache takes on, off, compare or bidirectional, not '" + args + "'");
            break;
        case DirectiveKind::Prefill:
        case DirectiveKind::Reset:
        case DirectiveKind::WhatIf:
        case DirectiveKind::Gpu:
            no_args();
            break;
        case DirectiveKind::Ask:
            d.ask = parse_ask(args);
            break;
        case DirectiveKind::Decode:
            if (args.empty())
                d.n = 1;
            else if (args == "all")
                d.n = -1;
            else if (!parse_int(args, d.n) || d.n < 1)
                throw Error("@decode takes a number of steps (1 or more) or 'all', not '" + args +
                            "'");
            break;
        case DirectiveKind::Highlight: {
            const auto kv = key_values(args, nullptr);
            only_keys(kv, {"layer", "head"});
            d.n = int_value(kv, "layer", -1, 0, 1 << 10);
            d.head = int_value(kv, "head", -1, 0, 1 << 10);
            break;
        }
        case DirectiveKind::Explain: {
            // Three whole numbers: layer, head, the query's position (from 1).
            std::vector<std::string> parts;
            for (std::size_t a = 0; a < args.size();) {
                const auto b = std::min(args.find_first_of(" \t", a), args.size());
                if (b > a) parts.push_back(args.substr(a, b - a));
                a = b + 1;
            }
            const bool last = parts.size() == 3 && parts[2] == "last";
            if (last) d.position = -1;
            if (parts.size() != 3 || !parse_int(parts[0], d.n) || !parse_int(parts[1], d.head) ||
                (!last && (!parse_int(parts[2], d.position) || d.position < 1)))
                throw Error(
                    "@explain takes LAYER HEAD POSITION: whole numbers, the query's POSITION "
                    "from 1 or 'last' (e.g. @explain 0 0 4)");
            break;
        }
        case DirectiveKind::Show: {
            // @show PANEL [PANEL ...] [size=large|full]: d.arg keeps them, one space apart.
            const auto& panels = lesson_panels();
            std::istringstream words{std::string(args)};
            std::string w, shown, size;
            while (words >> w) {
                if (w.rfind("size=", 0) == 0) {
                    size = w.substr(5);
                    if (size != "large" && size != "full")
                        throw Error("@show: size must be large or full, not '" + size + "'");
                    continue;
                }
                if (std::find(panels.begin(), panels.end(), w) == panels.end()) {
                    std::string list;
                    for (const auto& p : panels) list += (list.empty() ? "" : ", ") + p;
                    throw Error("@show: unknown panel '" + w + "' (panels: " + list + ")");
                }
                shown += (shown.empty() ? "" : " ") + w;
            }
            if (shown.empty()) throw Error("@show: which panel? (e.g. @show attention)");
            d.arg = size.empty() ? shown : shown + " size=" + size;
            break;
        }
        case DirectiveKind::Batch: {
            const auto kv = key_values(args, &d.batch.prompts);
            only_keys(kv, {"sizes", "decode", "repeats", "prompts"});
            const auto sizes = kv.find("sizes");
            if (sizes == kv.end()) throw Error("@batch needs sizes=1,2,4,8");
            std::string s = sizes->second;
            for (std::size_t a = 0; a <= s.size();) {
                const auto comma = std::min(s.find(',', a), s.size());
                int b = 0;
                if (!parse_int(s.substr(a, comma - a), b) || b < 1 || b > 8)
                    throw Error("sizes=" + s + ": each size is a whole number in 1..8");
                d.batch.sizes.push_back(b);
                a = comma + 1;
            }
            d.batch.decode_steps = int_value(kv, "decode", 8, 1, 4096);
            d.batch.repeats = int_value(kv, "repeats", 3, 1, 100);
            if (d.batch.prompts.empty()) throw Error("@batch needs prompts=\"...\" | \"...\"");
            break;
        }
        case DirectiveKind::Scale: {
            const auto kv = key_values(args, nullptr);
            only_keys(kv, {"model", "gpu", "context", "batch", "dtype"});
            auto need = [&](const char* key) {
                const auto it = kv.find(key);
                if (it == kv.end()) throw Error(std::string("@scale needs ") + key + "=...");
                return it->second;
            };
            d.scale.model = need("model");
            d.scale.gpu = need("gpu");
            const bool loaded = d.scale.model == kLoadedModel;
            if (!loaded && !find_scale_model(d.scale.model)) {
                std::string list = kLoadedModel;
                for (const auto& m : scale_models()) list += ", " + m.key;
                throw Error("@scale: unknown model '" + d.scale.model + "' (known: " + list + ")");
            }
            if (!find_scale_gpu(d.scale.gpu)) {
                std::string list;
                for (const auto& g : scale_gpus()) list += (list.empty() ? "" : ", ") + g.key;
                throw Error("@scale: unknown gpu '" + d.scale.gpu + "' (known: " + list + ")");
            }
            d.scale.context = int_value(kv, "context", 4096, 1, 1 << 24);
            d.scale.batch = int_value(kv, "batch", 1, 1, 1 << 16);
            const auto dt = kv.find("dtype");
            if (dt != kv.end() && dt->second != "bf16" && dt->second != "fp16")
                throw Error("@scale dtype is bf16 or fp16 (the datasheet peaks are 16-bit)");
            d.scale.bytes_per_value = 2;
            // The context must fit the model: checked here so the file is wrong, not the run
            // (the loaded model's when the step plays).
            if (!loaded) scale_report(d.scale);
            break;
        }
        case DirectiveKind::Serve: {
            ServePlan& p = d.serve;
            const auto kv = key_values(args, &p.prompts);
            only_keys(kv,
                      {"prompts", "arrive", "new", "block", "pool", "batch", "budget", "sharing",
                       "window", "sinks", "positions", "cache", "scales", "view", "timing"});
            if (p.prompts.empty() || p.prompts.size() > 16)
                throw Error("@serve needs prompts=\"...\" | \"...\" (1 to 16 of them)");
            for (const auto& t : p.prompts)
                if (t.empty()) throw Error("@serve: a prompt is empty");
            p.new_tokens = int_value(kv, "new", 32, 1, 2048);
            p.block_size = int_value(kv, "block", 16, 1, 1 << 16);
            // Absent: 0 (the pool max_num_seqs contexts take; no budget; the full cache).
            const auto given = [&](const char* key) {
                return kv.count(key) ? int_value(kv, key, 1, 1, 1 << 16) : 0;
            };
            p.pool_blocks = given("pool");
            p.max_num_seqs = int_value(kv, "batch", 8, 1, 64);
            p.budget = given("budget");
            p.timing = int_value(kv, "timing", 1, 1, 9);
            p.window = given("window");
            p.sinks = int_value(kv, "sinks", 0, 0, 1 << 16);
            if (kv.count("sinks") && !kv.count("window"))
                throw Error("@serve: sinks= needs window=");
            const auto on_off = [&](const char* key) {
                const auto it = kv.find(key);
                if (it != kv.end() && it->second != "on" && it->second != "off")
                    throw Error(std::string("@serve: ") + key + " is on or off, not '" +
                                it->second + "'");
                return it == kv.end() ? std::string() : it->second;
            };
            p.prefix_caching = on_off("sharing") != "off";
            p.shown = on_off("view") == "on";
            const auto pick = [&](const char* key, std::string& into,
                                  std::initializer_list<const char*> names) {
                const auto it = kv.find(key);
                if (it == kv.end()) return;
                std::string all;
                for (const char* n : names) {
                    if (it->second == n) {
                        into = n;
                        return;
                    }
                    all += all.empty() ? n : std::string(", ") + n;
                }
                throw Error(std::string("@serve: ") + key + " is one of " + all + ", not '" +
                            it->second + "'");
            };
            pick("positions", p.positions, {"cache", "original"});
            pick("cache", p.cache, {"f32", "int8", "fp8"});
            pick("scales", p.scales, {"token", "tensor", "channel"});
            if (kv.count("positions") && !kv.count("window"))
                throw Error("@serve: positions= needs window=");
            if (kv.count("scales") && p.cache == "f32")
                throw Error("@serve: scales= needs cache=int8 or cache=fp8");
            if (const auto ar = kv.find("arrive"); ar != kv.end()) {
                // One step a prompt, comma-separated: arrive=0,60
                for (std::size_t a = 0; a <= ar->second.size();) {
                    const auto comma = std::min(ar->second.find(',', a), ar->second.size());
                    int step = 0;
                    if (!parse_int(ar->second.substr(a, comma - a), step) || step < 0 ||
                        step > (1 << 24))
                        throw Error("@serve: arrive= takes one step (0.." +
                                    std::to_string(1 << 24) + ") a prompt, comma-separated");
                    p.arrivals.push_back(step);
                    a = comma + 1;
                }
                if (p.arrivals.size() != p.prompts.size())
                    throw Error("@serve: arrive= gives " + std::to_string(p.arrivals.size()) +
                                " steps for " + std::to_string(p.prompts.size()) + " prompts");
            }
            break;
        }
        case DirectiveKind::Expect:
            d.expect = Expectation::parse(args, validate_lesson_metric);
            break;
    }
}

// An @ask has its words, and an @expect after it in the step checks the answer it reveals: a
// check whose left side is the @ask's expression (`@ask rows` ... `@expect rows == 1`), so the why
// written beside it stays true.
template <class Fail>
void check_ask(const LessonStep& s, Fail& fail) {
    const Directive* ask = s.ask();
    if (!ask) return;
    if (ask->ask.question.empty()) fail(ask->line, "@ask needs an @question line under it");
    if (ask->ask.why.empty()) fail(ask->line, "@ask needs a @why line under it");
    const auto squeeze = [](const std::string& t) {
        std::string out;
        for (char c : t)
            if (!std::isspace(static_cast<unsigned char>(c))) out += c;
        return out;
    };
    const std::string answer = squeeze(ask->ask.answer.text());
    bool after = false, checked = false;
    for (const auto& d : s.directives) {
        after = after || &d == ask;
        if (!after || d.kind != DirectiveKind::Expect) continue;
        const std::string e = squeeze(d.expect.text());
        if (e.rfind(answer, 0) != 0) continue;
        const char next = e.size() > answer.size() ? e[answer.size()] : 0;
        // A comparison's answer is yes when the @expect of the same comparison holds.
        checked = checked || next == '=' || next == '!' || next == '<' || next == '>' ||
                  (ask->ask.answer.is_comparison() && e == answer);
    }
    if (!checked)
        fail(ask->line, "@ask " + ask->ask.answer.text() +
                            ": add an @expect on it after the @ask (e.g. @expect " +
                            ask->ask.answer.text() +
                            " == ...) so the answer it reveals is checked");
}

}  // namespace

const Directive* LessonStep::ask() const {
    for (const auto& d : directives)
        if (d.kind == DirectiveKind::Ask) return &d;
    return nullptr;
}

long long batch_forward_passes(const BatchPlan& p) {
    return static_cast<long long>(p.repeats) * static_cast<long long>(p.sizes.size()) *
           (1 + static_cast<long long>(p.decode_steps));
}

const char* directive_name(DirectiveKind k) {
    for (const auto& n : kNames)
        if (n.kind == k) return n.name;
    return "?";
}

const std::vector<std::string>& lesson_panels() {
    static const std::vector<std::string> p = {"prompt", "tokens", "attention", "kv",    "whatif",
                                               "time",   "next",   "toy",       "batch", "scale"};
    return p;
}

Lesson parse_lesson(std::string_view text, const std::string& file) {
    Lesson lesson;
    // Editors on Windows start UTF-8 files with a byte order mark: it is not part of the title.
    text = without_bom(text);
    lesson.file = file;
    std::vector<std::string> lines;
    for (std::size_t a = 0; a <= text.size();) {
        auto nl = text.find('\n', a);
        if (nl == std::string_view::npos) nl = text.size();
        std::string l(text.substr(a, nl - a));
        if (!l.empty() && l.back() == '\r') l.pop_back();
        lines.push_back(std::move(l));
        a = nl + 1;
    }
    if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // after the last newline
    auto fail = [&](int line, const std::string& why) -> void {
        throw Error(file + ":" + std::to_string(line) + ": " + why);
    };

    bool in_fence = false, have_title = false;
    long long batch_passes = 0;  // over every @batch line so far
    std::string* prose = &lesson.intro;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const int ln = static_cast<int>(i) + 1;
        const std::string& l = lines[i];
        if (!have_title) {
            if (trim(l).empty()) continue;
            if (l.rfind("# ", 0) != 0 || trim(l.substr(2)).empty())
                fail(ln, "a lesson starts with a '# Title' line");
            lesson.title = trim(l.substr(2));
            have_title = true;
            continue;
        }
        if (l.rfind("```", 0) == 0 || l.rfind("~~~", 0) == 0) in_fence = !in_fence;
        if (!in_fence && l.rfind("## ", 0) == 0) {
            LessonStep s;
            s.title = trim(l.substr(3));
            s.line = ln;
            if (s.title.empty()) fail(ln, "a step heading needs a title");
            lesson.steps.push_back(std::move(s));
            prose = &lesson.steps.back().prose;
            continue;
        }
        if (!in_fence && !l.empty() && l[0] == '@') {
            const auto sp = l.find_first_of(" \t");
            const std::string name =
                l.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
            const std::string rest = sp == std::string::npos ? std::string() : trim(l.substr(sp));
            if (name == kAskParts[0] || name == kAskParts[1]) {
                // @question / @why: the words of the @ask above, in this file's language.
                Directive* ask = nullptr;
                if (!lesson.steps.empty())
                    for (auto& d : lesson.steps.back().directives)
                        if (d.kind == DirectiveKind::Ask) ask = &d;
                if (!ask) fail(ln, "@" + name + " belongs under an @ask in the same step");
                std::string& slot = name == kAskParts[0] ? ask->ask.question : ask->ask.why;
                if (!slot.empty()) fail(ln, "@" + name + " given twice for one @ask");
                if (rest.empty()) fail(ln, "@" + name + " needs text");
                slot = rest;
                continue;
            }
            Directive d;
            d.line = ln;
            d.text = trim(l.substr(1));
            bool known = false;
            for (const auto& n : kNames)
                if (name == n.name) {
                    d.kind = n.kind;
                    known = true;
                }
            if (!known) {
                std::vector<std::string> names;
                for (const auto& n : kNames) names.emplace_back(n.name);
                for (const char* n : kAskParts) names.emplace_back(n);
                const std::string near = closest_name(name, names);
                const std::string hint = near.empty() ? "" : " (did you mean @" + near + "?)";
                fail(ln, "unknown directive '@" + name + "'" + hint);
            }
            if (lesson.steps.empty())
                fail(ln, "directives belong in a step: put a '## Step title' line above it");
            try {
                parse_arguments(d, rest);
            } catch (const Error& e) {
                fail(ln, e.what());
            }
            if (d.kind == DirectiveKind::Ask) {
                LessonStep& st = lesson.steps.back();
                if (st.ask_at >= 0) fail(ln, "one @ask per step: this step has one already");
                st.ask_at = static_cast<int>(prose->size());
            }
            if (d.kind == DirectiveKind::Batch) {
                batch_passes += batch_forward_passes(d.batch);
                if (batch_passes > kMaxLessonBatchPasses)
                    fail(ln, "@batch: this lesson's @batch lines would run " +
                                 std::to_string(batch_passes) +
                                 " forward passes (repeats x sizes x (1 + decode), summed), at "
                                 "most " +
                                 std::to_string(kMaxLessonBatchPasses));
            }
            lesson.steps.back().directives.push_back(std::move(d));
            continue;
        }
        // A leading backslash lets prose start with '@'.
        *prose += (!in_fence && l.rfind("\\@", 0) == 0 ? l.substr(1) : l) + "\n";
    }
    if (!have_title) fail(1, "a lesson starts with a '# Title' line (the file is empty)");
    // Prose in another encoding (GBK, Latin-1) would show as escapes and '?' glyphs.
    if (const std::size_t bad = first_bad_utf8(text); bad != std::string_view::npos) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
        fail(1 + static_cast<int>(std::count(text.begin(), text.begin() + bad, '\n')),
             std::string("not UTF-8 text (byte ") + hex + " at byte offset " + std::to_string(bad) +
                 "); save the lesson as UTF-8");
    }
    if (in_fence) fail(static_cast<int>(lines.size()), "a ``` code block is not closed");
    if (lesson.steps.empty())
        fail(static_cast<int>(lines.size()), "no steps: each step starts with a '## ' heading");
    lesson.intro = trim(lesson.intro);
    for (auto& s : lesson.steps) {
        // The @ask's place in the prose moves with the blank lines trimmed at its start.
        std::size_t lead = 0;
        while (lead < s.prose.size() && std::isspace(static_cast<unsigned char>(s.prose[lead])))
            ++lead;
        s.prose = trim(s.prose);
        if (s.ask_at >= 0)
            s.ask_at = static_cast<int>(std::min<std::size_t>(
                s.prose.size(), static_cast<std::size_t>(s.ask_at) > lead ? s.ask_at - lead : 0));
        check_ask(s, fail);
        // The step's Serving view: its @serve marked view=on (at most one), else its last.
        Directive* shown = nullptr;
        for (Directive& d : s.directives) {
            if (d.kind != DirectiveKind::Serve) continue;
            if (shown && shown->serve.shown && d.serve.shown)
                fail(d.line, "@serve: one view=on per step (the run its Serving view shows)");
            if (!shown || !shown->serve.shown) shown = &d;
        }
        if (shown) shown->serve.shown = true;
    }
    return lesson;
}

Lesson load_lesson(const std::string& path) {
    Lesson l = parse_lesson(read_text_file(path, std::size_t(1) << 20), path);
    l.lang = report_lang_from_code(std::filesystem::path(path).parent_path().filename().string());
    return l;
}

}  // namespace kvs
