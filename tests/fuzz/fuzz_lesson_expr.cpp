// Fuzz target: arbitrary bytes as an @expect check -> Expectation::parse, then evaluated against a
// live session of the toy model (attention, head outputs, logits kept), so every index a check can
// hold (negative, huge, NaN, fractions) goes through the metrics' index resolution. Errors are
// one-line failed outcomes, never a crash, UB or an exception.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/lesson_expr.h"
#include "lessonlib/lesson_metrics.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_steps.h"

using namespace kvs;

namespace {

struct Live {
    std::unique_ptr<Model> model = open_model("toy");
    CpuBackend backend;
    std::unique_ptr<Session> session;
    std::unique_ptr<Session> uncached;
    Live() {
        SessionConfig cfg = fuzz::timed_once({});
        cfg.capture.attention = true;
        cfg.keep_logits = true;
        session = std::make_unique<Session>(*model, backend, cfg);
        cfg.mode = CacheMode::Uncached;
        uncached = std::make_unique<Session>(*model, backend, cfg);
        for (Session* s : {session.get(), uncached.get()}) {
            s->set_prompt("Today weather is so");
            s->step();
            s->step();
            // Times as fixed numbers: checks compare times, and which way a comparison of two
            // measured times goes would change from run to run what the fuzzer explores.
            std::vector<StepRecord> steps = s->trace().steps();
            s->trace().clear();
            int k = 0;
            for (StepRecord& r : steps) {
                r.wall_seconds = r.forward_seconds = r.forward_min_seconds = r.forward_max_seconds =
                    1e-3 * ++k;
                r.op_times = {};
                s->trace().push(std::move(r));
            }
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Live live;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Expectation e;
    try {
        e = Expectation::parse(text, validate_lesson_metric);
    } catch (const Error& err) {
        FUZZ_CHECK(std::string(err.what()).find('\n') == std::string::npos);
        return 0;
    }
    LessonFacts f;
    f.model = live.model.get();
    f.session = live.session.get();
    f.uncached = live.uncached.get();
    const auto o = e.evaluate([&](const std::string& name, const std::vector<LessonValue>& args) {
        return read_lesson_metric(f, name, args);
    });
    FUZZ_CHECK(o.why.find('\n') == std::string::npos);
    return 0;
}
