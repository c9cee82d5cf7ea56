#include "lessonlib/lesson.h"

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

bool directive_named(std::string_view name, DirectiveKind& out) {
    for (const auto& n : kNames)
        if (name == n.name) {
            out = n.kind;
            return true;
        }
    return false;
}

std::vector<std::string> directive_names() {
    std::vector<std::string> names;
    for (const auto& n : kNames) names.emplace_back(n.name);
    return names;
}

const std::vector<std::string>& lesson_panels() {
    static const std::vector<std::string> p = {"prompt", "tokens", "attention", "kv",    "whatif",
                                               "time",   "next",   "toy",       "batch", "scale"};
    return p;
}

}  // namespace kvs
