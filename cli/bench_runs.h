#pragma once
// The measurements of `kvscope-cli bench`, each one timed run of a Session (the same engine the
// GUI and the other commands use), never a private forward loop.
//
// Length L means:
//   prefill (batched or token by token): a prompt of L tokens, timed up to the first new token;
//   decode (cached or uncached): L new tokens after the benchmark's short prompt: the first comes
//     from the prefill, the other L - 1 from decode steps, which are what the decode rate counts.
#include <memory>
#include <string>
#include <vector>

#include "core/model/backend.h"
#include "core/model/counts.h"
#include "core/model/model.h"

namespace kvs {
class Session;
}

namespace kvs::cli {

enum class Measure { PrefillBatched, PrefillByToken, DecodeCached, DecodeUncached };
constexpr Measure kMeasures[] = {Measure::PrefillBatched, Measure::PrefillByToken,
                                 Measure::DecodeCached, Measure::DecodeUncached};
const char* measure_name(Measure m);  // "prefill_batched", ... (CSV and table)
bool is_prefill(Measure m);

struct RunSample {
    int tokens = 0;            // what the rate counts: prompt tokens, or decode steps
    double seconds = 0;        // wall time of the timed part (prefill step, or the decode loop)
    double forward_s = 0;      // forward passes only, summed over the timed steps
    double first_token_s = 0;  // the prefill step, prompt in to first token chosen
    double total_s = 0;        // the whole generation: prefill step and decode loop
    StepCounts counts;         // counted from shapes, over the timed steps
    OpTimes ops;               // measured per op, over the timed steps
    std::string text;          // decode: the text generated
};

// A model whose generation never stops at an end token, so every run of a length does the same
// work. Everything else is the wrapped model's.
std::unique_ptr<Model> without_stop_tokens(const Model& m);

struct RunSetup {
    const Model* model = nullptr;  // for decode, the model from without_stop_tokens()
    Backend* backend = nullptr;
    std::vector<int> prompt;  // prefill: L tokens; decode: the short prompt
    int length = 0;
    bool trace = false;  // attention and K/V rows captured, logits kept (what the GUI records)
};

// A Session for one measurement, reused for its warm-up and repeats.
class MeasureRunner {
  public:
    MeasureRunner(Measure m, const RunSetup& setup);
    ~MeasureRunner();
    RunSample run();

  private:
    Measure measure_;  // what this runner times: a prefill or a decode
    std::unique_ptr<Session> session_;
};

// A prompt of exactly `length` tokens: BOS (when the model has one), then `text` encoded and
// repeated as often as needed. Throws kvs::Error when it cannot make one (empty text, no context).
std::vector<int> prompt_of_length(const Model& m, const std::string& text, int length);

}  // namespace kvs::cli
