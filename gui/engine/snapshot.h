#pragma once
// What the engine worker publishes for the window (gui/engine/engine_worker.h): the live sessions'
// traces, the lesson played, a recorded run, the serving run, and what the worker is doing or what
// failed, as codes the window says in its own words (gui/views/engine_words.h). The window reads it
// under the worker's lock for the length of a frame.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/serving/serve_trace.h"
#include "core/session/cache_view.h"
#include "core/session/sampler.h"
#include "core/session/session.h"
#include "core/session/trace.h"
#include "core/session/trace_reader.h"
#include "lessonlib/batch_sweep.h"
#include "lessonlib/lesson_player.h"
#include "lessonlib/scale_accounting.h"

namespace kvs::gui {

// One live session as the window sees it (gui/views/engine_words.h names it by its mode).
struct SessionView {
    CacheMode mode = CacheMode::Cached;
    AttentionMask mask = AttentionMask::Causal;
    CacheView view = CacheView::On;  // the view it belongs to (bidirectional: the pair's half)
    Trace trace;  // every step so far, with its payload (within the trace's memory budget)
    std::vector<int> prompt_tokens;
    FinishReason finish_reason = FinishReason::None;  // None while generation may go on
};

// What a lesson played on the live engine has done (the worker's SessionLessonTarget), published
// after every step it plays. The player keeps no state: Next plays the following step on top of
// the ones before it, anything else replays from the lesson's first step.
struct LessonRun {
    int number = 0;                     // the lesson (its NN); 0: none has been played
    std::vector<StepOutcome> outcomes;  // steps 0..played in order (a replay redoes them all)
    int target = -1;                    // the step being played now, -1 when none
    bool cancelled = false;  // the last play was stopped (Back, another lesson) before its end
    std::shared_ptr<const BatchTable> batch;   // the last @batch
    std::shared_ptr<const ScaleReport> scale;  // the last @scale
    std::shared_ptr<const GpuStepView> gpu;    // the last @gpu
    // The @serve the step names (ServePlan::shown; one pointer per run of it): the window's
    // Serving view runs it, `serve_steps` steps at once (to the step whose tables the lesson
    // printed).
    std::shared_ptr<const ServePlan> serve;
    int serve_steps = 0;
    int layer = 0, head = 0;             // the last @highlight
    std::uint64_t highlight_serial = 0;  // bumped by each @highlight (a replay's last one counts)
    // The last @explain: layer, head and the query's token index (-1: the newest).
    int explain_layer = 0, explain_head = 0, explain_q_pos = -1;
    std::uint64_t explain_serial = 0;  // bumped by each @explain: the window opens the panel
    int explain_step = -1;             // the lesson step whose @explain that was
    std::string panel;                 // the last @show of the step played last
    std::uint64_t serial = 0;          // bumped on every change, so the window can react once
    int played() const { return static_cast<int>(outcomes.size()) - 1; }
};

// What a request does. The worker keeps no words of the window's: the window says a request in
// its own language (gui/views/engine_words.h).
enum class EngineTask {
    None,
    OpenModel,
    SwitchBackend,
    SwitchCache,
    SetPrompt,
    SetTraceBudget,
    SetTimingRuns,
    SetSampler,
    Reset,
    Prefill,
    Decode,
    LessonStep,
    OpenReplay,  // a recorded run (trace JSON) in place of the model
    ExportRun,   // the run shown written as CSV, trace JSON or trace events
    ServeOpen,   // a serving run set up (the Serving view)
    ServeStep,   // its next scheduler steps
};

// A request as the window names it: what it does, and to what.
struct EngineRequest {
    EngineTask task = EngineTask::None;
    std::string subject = {};  // OpenModel: the model asked for; SwitchBackend: the backend;
                               // OpenReplay: the trace file
    int count = 0;             // Decode: the steps asked for; LessonStep: the lesson's number
    int step = 0;              // LessonStep: the step, from 1
};

// A recorded run the window replays (kvscope --replay, a trace dropped on it, the model menu's
// recorded runs): the file, and where and on what it was recorded.
struct ReplaySource {
    std::string path;
    RecordedOn recorded;
    int version = 0;  // the file's kvscope_trace
};

// What the window can write of the run it shows (live or replayed), on the worker thread.
struct ExportFile {
    enum class Kind { TraceJson, TraceEvents, StepsCsv, AttentionCsv } kind;
    std::string path;
    // The attention matrix's session, step, layer and head.
    int session = 0, step = 0, layer = 0, head = 0;
};

// A serving run for the Serving view (gui/panels/serving.h): the prompts (a file's lines, or the
// built-in eight sharing a prefix) and the scheduler's settings.
struct ServeSetup {
    std::string prompts_file;  // empty: builtin_serve_prompts()
    // Non-empty: these prompts, in order, not the file's (a lesson's @serve).
    std::vector<std::string> prompts;
    ServeConfig config = default_view_config();
    // Small blocks and a small pool, so the grid is readable and requests queue: 4 rows a block,
    // 4 requests at once, 16 new tokens each, a pool of 32 blocks (more when one request needs
    // more).
    static ServeConfig default_view_config() {
        ServeConfig c;
        c.block_size = 4;
        c.max_num_seqs = 4;
        c.pool_blocks = 32;
        c.max_new_tokens = 16;
        return c;
    }
};

struct EngineSnapshot {
    std::shared_ptr<const Model> model;  // null until a model opened
    std::string model_spec;              // what was asked: "default", "toy", a path
    std::string model_note;              // why another model than the one asked, if so
    std::string backend_asked = "auto";
    std::string backend_name, backend_device, backend_note;
    CacheView cache = CacheView::On;
    std::string prompt;
    SamplerConfig sampler;
    std::vector<SessionView> sessions;  // one, or two in compare mode (cached first)
    // Compare mode: largest |logit difference| between the two sessions, per step index.
    std::vector<double> logit_max_diff;
    // Bumped whenever the traces start over (model, prompt, backend, reset): views keyed on it
    // rebuild instead of extending.
    std::uint64_t generation = 1;

    bool busy = false;           // a request is running (set by the worker when it starts one)
    EngineRequest busy_request;  // which one
    int busy_done = 0, busy_total = 0;
    double busy_since = 0;  // seconds on the worker's clock (EngineWorker::now())

    std::string error;  // the last request's user error, one line; empty after a success
    // The request that failed (the window says "could not open the model", ...); None when the
    // error is not a failed request's (one that did part of its work says why in `error` alone).
    EngineTask error_task = EngineTask::None;
    std::uint64_t error_serial = 0;

    LessonRun lesson;

    // Set while a recorded run is shown: the sessions are its traces, the model its shapes and
    // pieces (core/model/replay_model.h); no step can run. Null for live sessions.
    std::shared_ptr<const ReplaySource> replay;
    // The files the last export wrote (a notice names them), bumped serial per export.
    std::vector<std::string> exported;
    std::uint64_t export_serial = 0;

    // The serving run the Serving view shows (null: none yet), and the model it runs on.
    std::shared_ptr<const ServeTrace> serving;
    std::shared_ptr<const Model> serving_model;
    // Why the last serving run asked for could not start, in the CLI's words (the scheduler's
    // or the prompt file's message); "" while one is open or none was asked for.
    std::string serving_error;

    int steps() const { return sessions.empty() ? 0 : int(sessions[0].trace.steps().size()); }
    bool finished() const {
        return !sessions.empty() && sessions[0].finish_reason != FinishReason::None;
    }
};

}  // namespace kvs::gui
