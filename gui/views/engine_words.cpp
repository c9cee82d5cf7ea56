#include "gui/views/engine_words.h"

#include <cstdio>

#include "gui/state/strings.h"
#include "lessonlib/finish_words.h"

namespace kvs::gui {

std::string request_words(const EngineRequest& r) {
    char b[256];
    switch (r.task) {
        case EngineTask::None:
            return {};
        case EngineTask::OpenModel:
            std::snprintf(b, sizeof b, tr("opening %s"), r.subject.c_str());
            return b;
        case EngineTask::SwitchBackend:
            std::snprintf(b, sizeof b, tr("switching the backend to %s"), r.subject.c_str());
            return b;
        case EngineTask::SwitchCache:
            return tr("switching the cache mode");
        case EngineTask::SetPrompt:
            return tr("setting the prompt");
        case EngineTask::SetTraceBudget:
            return tr("setting the trace budget");
        case EngineTask::SetTimingRuns:
            return tr("setting how steps are timed");
        case EngineTask::SetSampler:
            return tr("setting the sampler");
        case EngineTask::Reset:
            return tr("reset");
        case EngineTask::Prefill:
            return tr("prefill");
        case EngineTask::Decode:
            if (r.count == 1) return tr("decode step");
            std::snprintf(b, sizeof b, tr("decoding %d steps"), r.count);
            return b;
        case EngineTask::LessonStep:
            std::snprintf(b, sizeof b, tr("lesson %d, step %d"), r.count, r.step);
            return b;
        case EngineTask::OpenReplay:
            std::snprintf(b, sizeof b, tr("opening the recorded run %s"), r.subject.c_str());
            return b;
        case EngineTask::ExportRun:
            return tr("exporting the run");
        case EngineTask::ServeOpen:
            return tr("queueing the serving requests");
        case EngineTask::ServeStep:
            if (r.count == 1) return tr("serving step");
            std::snprintf(b, sizeof b, tr("serving %d steps"), r.count);
            return b;
    }
    return {};
}

const char* failure_words(EngineTask t) {
    switch (t) {
        case EngineTask::None:
            return "";
        case EngineTask::OpenModel:
            return tr_later("could not open the model");
        case EngineTask::SwitchBackend:
            return tr_later("could not switch the backend");
        case EngineTask::SwitchCache:
            return tr_later("could not switch the cache mode");
        case EngineTask::SetPrompt:
            return tr_later("the prompt was not used");
        case EngineTask::SetTraceBudget:
            return tr_later("could not set the trace budget");
        case EngineTask::SetTimingRuns:
            return tr_later("could not set how steps are timed");
        case EngineTask::SetSampler:
            return tr_later("could not set the sampler");
        case EngineTask::Reset:
            return tr_later("could not reset");
        case EngineTask::Prefill:
            return tr_later("the prefill did not run");
        case EngineTask::Decode:
            return tr_later("the step did not run");
        case EngineTask::LessonStep:
            return tr_later("the lesson step did not run");
        case EngineTask::OpenReplay:
            return tr_later("could not open the recorded run");
        case EngineTask::ExportRun:
            return tr_later("could not export the run");
        case EngineTask::ServeOpen:
            return tr_later("could not start serving");
        case EngineTask::ServeStep:
            return tr_later("the serving step did not run");
    }
    return "";
}

const char* session_label(CacheMode m) {
    return m == CacheMode::Cached ? tr_later("with KV cache") : tr_later("without KV cache");
}

const char* session_label(const SessionView& s) {
    if (s.mask == AttentionMask::Bidirectional) return tr_later("bidirectional (no causal mask)");
    if (s.view == CacheView::Bidirectional) return tr_later("causal, without KV cache");
    return session_label(s.mode);
}

const char* finish_reason_text(FinishReason reason) {
    return finish_words(reason, report_lang(language()));
}

int shown_step(const SessionView& s, int step) {
    const int n = static_cast<int>(s.trace.steps().size());
    if (n == 0) return -1;
    return step < 0 ? n - 1 : std::min(step, n - 1);
}

const char* step_label(const SessionView& s, int step) {
    if (step < 0 || step >= static_cast<int>(s.trace.steps().size())) return tr(session_label(s));
    const StepRecord& r = s.trace.steps()[step];
    if (r.mask == AttentionMask::Bidirectional || s.view == CacheView::Bidirectional)
        return tr(session_label(s));
    return r.mode == CacheMode::Cached ? tr("with KV cache") : tr("without KV cache");
}

}  // namespace kvs::gui
