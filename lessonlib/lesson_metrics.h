#pragma once
// The names an @expect line may read, each computed from LessonFacts (the live sessions, the
// last @batch and @scale). Step metrics take an optional step index: the trace's step number,
// negative counting from the end (default -1, the latest step). Prefix any step or session
// metric with `uncached_` to read the twin session of `@cache compare`, or with `bidirectional_`
// to read the session without the causal mask of `@cache bidirectional` (the same twin, named
// for what it is there, and refused in any other view).
#include <string>
#include <vector>

#include "lessonlib/lesson_expr.h"
#include "lessonlib/lesson_target.h"

namespace kvs {

struct LessonMetric {
    const char* name;
    int min_args;
    int max_args;
    const char* args;  // argument names for the help text
    const char* help;
    bool session;        // reads the driven session (so an uncached_ twin form exists)
    bool timed = false;  // a measured time (or a rate from one): depends on the machine's state
};

const std::vector<LessonMetric>& lesson_metrics();

// A metric's name split into its twin prefix and the metric: "uncached_rows" is {Uncached,
// "rows"}, "bidirectional_kv_delta_k" {Bidirectional, "kv_delta_k"}, "rows" {None, "rows"}.
enum class TwinPrefix { None, Uncached, Bidirectional };
struct MetricName {
    TwinPrefix twin = TwinPrefix::None;
    std::string base;
};
MetricName split_metric_name(const std::string& name);

// Empty when `name` with `n_args` arguments is a known metric, else a one-line reason.
std::string validate_lesson_metric(const std::string& name, int n_args);

// Whether `name` (or its twin form) reads a measured time, not a count; with `args`, also a
// metric whose argument names a measured figure (serve("tokens_per_second")).
bool is_timed_lesson_metric(const std::string& name, const std::vector<LessonValue>& args = {});

// Throws kvs::Error when the metric cannot be read now (no step yet, unknown word, ...).
LessonValue read_lesson_metric(const LessonFacts& facts, const std::string& name,
                               const std::vector<LessonValue>& args);

}  // namespace kvs
