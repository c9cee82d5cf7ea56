#pragma once
// A lesson: Markdown prose in steps, each step with directive lines that act on the live session
// (lessons/README.md documents the format). The file
//   # Title
//   intro prose
//   ## Step title
//   prose ...
//   @model toy
//   @prefill
//   @expect token == "nice"
// parses to a Lesson with one LessonStep per `## ` heading. Every problem is a kvs::Error that
// starts with FILE:LINE:.
#include <string>
#include <string_view>
#include <vector>

#include "core/session/cache_view.h"
#include "lessonlib/lesson_expr.h"
#include "lessonlib/report_lang.h"

namespace kvs {

enum class DirectiveKind {
    Model,      // @model toy|default|stories260K|PATH
    Prompt,     // @prompt TEXT
    Limit,      // @limit N                      new tokens allowed (default: the context)
    Cache,      // @cache on|off|compare|bidirectional
    Prefill,    // @prefill
    Decode,     // @decode N | @decode all
    Reset,      // @reset                        back to the prompt, cache emptied
    Highlight,  // @highlight layer=L head=H
    Explain,    // @explain LAYER HEAD POSITION|last   inside one attention row of the latest step
    Show,       // @show PANEL [PANEL ...] [size=large|full]
    WhatIf,     // @whatif                       KV bytes per token as MHA / GQA / MQA
    Batch,      // @batch sizes=1,2,4,8 decode=N [repeats=R] prompts="A" | "B" ...
    Scale,      // @scale model=M context=C gpu=G [batch=B] [dtype=bf16|fp16|fp32]
    Gpu,        // @gpu                          a decode step as a CUDA device runs it
    Serve,   // @serve prompts="A" | "B" ... [new=N] [block=B] [pool=P] [batch=L] [sharing=on|off]
             //        [window=W] [sinks=S] [cache=f32|int8|fp8]   many requests, one paged cache
    Ask,     // @ask EXPR [choices=A | B ...] [within=T], then @question TEXT and @why TEXT
    Expect,  // @expect CHECK                 (lessonlib/lesson_expr.h)
};
const char* directive_name(DirectiveKind k);

// The panels a GUI can bring forward with @show.
const std::vector<std::string>& lesson_panels();

struct BatchPlan {
    std::vector<int> sizes;            // batch sizes to measure, each 1..8
    int decode_steps = 8;              // decode steps measured per size
    int repeats = 3;                   // the fastest of R runs is kept
    std::vector<std::string> prompts;  // batch size B uses the first B (cycling when fewer)
};
// Forward passes a @batch line runs: per repeat and size, one prefill and `decode_steps` decode
// passes (each at most 8 rows). A lesson's @batch lines together may run at most
// kMaxLessonBatchPasses, so a file cannot make a class wait for hours.
long long batch_forward_passes(const BatchPlan& p);
inline constexpr long long kMaxLessonBatchPasses = 20000;

// @serve: the prompts run to their end by the serving scheduler (core/serving/serve_run.h) on the
// lesson's model, greedy.
struct ServePlan {
    std::vector<std::string> prompts;  // one request each, submitted in order (1..16)
    std::vector<int> arrivals;         // the step each arrives at; empty: all at step 0
    int new_tokens = 32;               // per request
    int block_size = 16;               // rows per block
    int pool_blocks = 0;               // 0: max_num_seqs contexts' worth
    int max_num_seqs = 8;              // requests running at once
    int budget = 0;                    // rows a step's pass may hold (0: no budget)
    bool prefix_caching = true;
    int window = 0, sinks = 0;        // a bounded cache; 0: the full cache
    std::string positions = "cache";  // the sinks' positions: cache or original
    std::string cache = "f32";        // the cache's rows: f32, int8 or fp8 (kv_quant.h)
    std::string scales = "token";     // a quantised cache's scales: token, tensor or channel
    int timing = 1;  // runs of it and of its prompts one at a time; the throughputs' fastest
    // The run the window's Serving view shows for its step: the step's @serve marked view=on,
    // else its last @serve (set by the parser).
    bool shown = false;
};

struct ScaleQuery {
    std::string model;  // a preset of lessonlib/scale_accounting.h, or kLoadedModel
    std::string gpu;    // a preset of lessonlib/scale_accounting.h
    int context = 4096;
    int batch = 1;
    int bytes_per_value = 2;  // bf16 / fp16: 2, fp32: 4
};

// @ask: a question the learner answers before the step runs; the engine's answer (`answer`, read
// where the @ask stands among the step's directives) is revealed beside theirs with `why`.
struct AskSpec {
    LessonExpr answer;
    std::vector<LessonValue> choices;  // 2 to 4 (keys 1-4); empty: the learner types a number
    bool yes_no = false;               // the choices are yes (1) and no (0)
    double within = 0;                 // a typed number this close to the answer is right
    std::string question, why;         // the @question and @why lines, in the file's language
};

struct Directive {
    DirectiveKind kind = DirectiveKind::Prefill;
    int line = 0;      // 1-based, in the lesson file
    std::string text;  // as written, without the '@' (shown in logs; compared across languages)
    std::string arg;   // @model spec, @prompt text, @show panel
    int n = 0;  // @decode count (-1: until generation finishes), @limit, @highlight/@explain layer
    int head = 0;      // @highlight, @explain
    int position = 0;  // @explain: the query's position (from 1); -1: the latest step's newest
    CacheView cache = CacheView::On;
    BatchPlan batch;
    ScaleQuery scale;
    ServePlan serve;
    Expectation expect;
    AskSpec ask;
};

struct LessonStep {
    std::string title;  // the `## ` heading
    std::string prose;  // Markdown without the heading and the directive lines
    int line = 0;       // line of the heading
    std::vector<Directive> directives;
    // Where the step's @ask stood in the prose (bytes into `prose`): a front end that asks shows
    // prose.substr(0, ask_at) with the question, the rest after the answer. -1: no @ask.
    int ask_at = -1;
    const Directive* ask() const;  // the step's @ask, or null
};

struct Lesson {
    std::string file;   // as given to the parser, used in messages
    std::string title;  // the `# ` line
    std::string intro;  // prose between the title and the first step
    std::vector<LessonStep> steps;
    // The language its report is written in (lessonlib/lesson_report.h, the checks in words):
    // Chinese for a file in a directory named zh (lessons/zh), else English. The CLI's --lang
    // overrides it.
    ReportLang lang = ReportLang::En;
};

// Parses lesson text; `file` names it in error messages.
Lesson parse_lesson(std::string_view text, const std::string& file);
// Reads and parses a lesson file.
Lesson load_lesson(const std::string& path);

}  // namespace kvs
