// A recorded run (trace JSON) shown in place of the live sessions, and the run shown, live or
// replayed, written as trace JSON, trace events or CSV.
#include "gui/engine/engine_worker.h"

#include <sstream>

#include "core/session/trace_csv.h"
#include "core/session/trace_events.h"
#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs::gui {

void EngineWorker::refuse_in_replay(const char* why) const {
    if (replay_) throw Error(why);
}

void EngineWorker::end_replay() {
    if (!replay_) return;
    replay_.reset();
    std::lock_guard<std::mutex> lk(mu_);
    snap_.replay.reset();
    snap_.sessions.clear();
    snap_.logit_max_diff.clear();
    snap_.model = workbench_.shared_model();
    ++snap_.generation;
}

void EngineWorker::open_replay(const std::string& path) {
    post({EngineTask::OpenReplay, path}, [this, path] {
        RecordedRun run = read_trace_file(path);  // a bad file changes nothing shown
        workbench_.drop_sessions();               // the live sessions give way to the recording
        std::vector<SessionView> views;
        bool bidirectional = false;  // a recording of the bidirectional view: its steps say so
        for (RecordedSession& rs : run.sessions) {
            SessionView v;
            v.mode = rs.mode;
            v.trace = std::move(rs.trace);
            v.prompt_tokens.assign(rs.tokens.begin(), rs.tokens.begin() + rs.prompt_len);
            v.finish_reason = rs.finish;
            if (!v.trace.empty()) v.mask = v.trace.steps()[0].mask;
            bidirectional |= v.mask == AttentionMask::Bidirectional;
            views.push_back(std::move(v));
        }
        const CacheView view = bidirectional   ? CacheView::Bidirectional
                               : run.compare() ? CacheView::Compare
                               : run.sessions[0].mode == CacheMode::Cached ? CacheView::On
                                                                           : CacheView::Off;
        for (SessionView& v : views) v.view = view;
        const Tokenizer& tok = run.model->tokenizer();
        std::string prompt;
        for (int t : views[0].prompt_tokens)
            if (t != tok.bos()) prompt += tok.piece(t);
        // The pieces of a llama2.c vocabulary carry the space before a word: the text
        // starts after the first one, as run.c prints it.
        if (!prompt.empty() && prompt[0] == ' ') prompt.erase(0, 1);
        auto source = std::make_shared<ReplaySource>();
        source->path = path;
        source->recorded = run.recorded;
        source->version = run.version;
        {
            std::lock_guard<std::mutex> lk(mu_);
            snap_.sessions = std::move(views);
            snap_.logit_max_diff = run.logit_max_diff;
            ++snap_.generation;
            snap_.model = run.model;
            snap_.model_spec = path;
            snap_.model_note.clear();
            snap_.cache = view;
            snap_.prompt = prompt;
            snap_.sampler = run.sampler;
            snap_.replay = source;
            snap_.backend_name = run.recorded.backend;
            snap_.backend_device = run.recorded.device;
            snap_.backend_note.clear();
        }
        replay_ = std::move(run);
    });
}

TraceJsonRun EngineWorker::run_shown() const {
    TraceJsonRun r;
    r.model = snap_.model.get();
    if (!r.model || snap_.sessions.empty()) throw Error("nothing to export: no model is open");
    if (replay_) {
        r.sampler = replay_->sampler;
        r.recorded = replay_->recorded;
    } else {
        r.sampler = workbench_.sampler();
        const StepRecord* last =
            snap_.sessions[0].trace.empty() ? nullptr : &snap_.sessions[0].trace.back();
        r.recorded =
            recorded_here("kvscope", last ? last->backend : snap_.backend_name,
                          last ? last->device : snap_.backend_device, workbench_.timing().runs);
    }
    const std::size_t n = replay_ ? replay_->sessions.size() : workbench_.sessions();
    for (std::size_t i = 0; i < std::min(n, snap_.sessions.size()); ++i) {
        TraceJsonSession t;
        t.mode = snap_.sessions[i].mode;
        t.trace = &snap_.sessions[i].trace;
        if (replay_) {
            const RecordedSession& rs = replay_->sessions[i];
            t.tokens = rs.tokens;
            t.prompt_len = rs.prompt_len;
            t.text = rs.text;
            t.finish = rs.finish;
        } else {
            const Session& s = workbench_.session(i);
            t.mode = s.config().mode;
            t.tokens = s.tokens();
            t.prompt_len = s.prompt_len();
            t.text = s.text();
            t.finish = s.finish_reason();
        }
        r.sessions.push_back(t);
    }
    r.logit_max_diff = snap_.logit_max_diff;
    return r;
}

void EngineWorker::export_run(std::vector<ExportFile> files) {
    post({EngineTask::ExportRun}, [this, files] {
        // The snapshot is read without its lock: only this thread writes it.
        const TraceJsonRun run = run_shown();
        std::vector<std::string> written;
        for (const ExportFile& f : files) {
            std::ostringstream out;
            OutputKind kind;
            switch (f.kind) {
                case ExportFile::Kind::TraceJson:
                    write_trace_json(out, run);
                    kind = trace_json_output();
                    break;
                case ExportFile::Kind::TraceEvents:
                    write_trace_events(out, run);
                    kind = trace_events_output();
                    break;
                case ExportFile::Kind::StepsCsv:
                    write_steps_csv(out, run);
                    kind = steps_csv_output();
                    break;
                case ExportFile::Kind::AttentionCsv: {
                    kind = attention_csv_output();
                    const std::size_t i =
                        std::min<std::size_t>(std::max(f.session, 0), run.sessions.size() - 1);
                    write_attention_csv(out, run.sessions[i].trace->steps(), f.step, f.layer,
                                        f.head, run.model->tokenizer());
                    break;
                }
            }
            write_output_file(f.path, out.str(), kind);
            written.push_back(f.path);
        }
        std::lock_guard<std::mutex> lk(mu_);
        snap_.exported = std::move(written);
        ++snap_.export_serial;
    });
}

}  // namespace kvs::gui
