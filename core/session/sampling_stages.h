#pragma once
// The next-token choice as stages, the way Inside attention shows a row:
//   logits → ÷ temperature → softmax → top-k (kept, renormalised) → top-p (the nucleus,
//   renormalised) → the draw: a coin in [0, 1) walks the final distribution's cumulative mass.
// The stages are the sampler's own (shape_distribution, draw_from: core/session/sampler.h), so
// the distribution recorded for a step is the one its draw indexed. Bounded: the most likely
// tokens (and the drawn one) each with its number at every stage, and the mass of the rest.
// A view that changes temperature, top-k or top-p reshapes a step's logits through the same
// function, without a draw.
#include <span>
#include <vector>

#include "core/session/sampler.h"

namespace kvs {

struct SamplingEntry {
    int id = 0;
    float logit = 0;
    float scaled_logit = 0;  // logit / temperature (greedy: the logit)
    float p = 0;             // softmax(logits), temperature 1
    float p_tempered = 0;    // softmax(logits / temperature) (greedy: p)
    float p_top_k = 0;       // after top-k, renormalised; 0: cut (top-k off: p_tempered)
    float p_final = 0;       // what the draw indexes: after top-p, renormalised; 0: cut
    // The final distribution's cumulative mass before this token, in the draw's order: the coin
    // picks this token when cdf_from <= coin < cdf_from + p_final.
    float cdf_from = 0;
};

struct SamplingStages {
    bool greedy = false;  // temperature 0: the largest logit, no draw
    float temperature = 0;
    int top_k = 0;
    float top_p = 0;
    int vocab = 0;
    int kept_top_k = 0;         // tokens top-k kept (vocab when off)
    int kept_top_p = 0;         // tokens in the nucleus (kept_top_k when top-p is off)
    float nucleus_mass = 1.0f;  // the nucleus's mass before renormalising (1 when off)
    bool draw_by_id = true;     // the draw walks the final distribution by token id (run.c
                                // without top-p), else by probability, best first
    float coin = -1.0f;         // the uniform draw (-1: greedy, or a preview without a draw)
    int drawn = -1;             // the token the draw picked (greedy: argmax; -1: no draw)
    bool forced = false;        // the session took another token (a twin following its partner)
    std::vector<SamplingEntry> entries;  // the most likely by logit, best first, then the drawn
    // The mass of every token not in entries, at each stage.
    float rest_p = 0, rest_tempered = 0, rest_top_k = 0, rest_final = 0;
};

// The stages of a draw at `c` over `logits` ([vocab]): `n_entries` most likely tokens (ties by
// id) plus the drawn one; coin < 0: no draw (a preview of other settings). Greedy
// (temperature 0 or one token): the argmax is drawn with certainty.
SamplingStages sampling_stages(std::span<const float> logits, const SamplerConfig& c, float coin,
                               int n_entries);

// Entries a trace reader accepts per step (the window records 16).
inline constexpr int kMaxSamplingEntries = 256;

}  // namespace kvs
