#pragma once
// A serving run step by step, as a view draws it: after each Scheduler step, every pool block's
// holders and filled rows and every request's state and block table, copied out of the scheduler
// (the window's Serving view reads these, never the scheduler).
#include <memory>
#include <string>
#include <vector>

#include "core/serving/scheduler.h"

namespace kvs {

// NotArrived: its arrival step (a prompts file's "@N") has not come yet.
enum class ServeState { NotArrived, Queued, Running, Finished, Preempted };
// "not arrived", "queued", "running", "finished", "preempted"
const char* serve_state_name(ServeState s);

// One pool block after a step: the requests whose tables name it (several: a prefix block found
// in the cache by later requests, its reference count) and the rows written into it (the most any
// holder has in it). A block no request holds may still keep a prefix block in the cache,
// waiting to be found again or taken for other rows (`cached`).
struct ServeBlockShot {
    std::vector<int> holders;  // request ids, in request order
    int rows = 0;              // 0..block_size
    bool cached = false;       // remembered in the prefix cache
};

struct ServeRequestShot {
    ServeState state = ServeState::Queued;  // Preempted: its blocks were taken back this step
    std::vector<int> table;                 // pool block per logical block; -1: let go (window)
    int len = 0;                            // K/V rows computed
    int prompt_len = 0, generated = 0;
    int cached_rows = 0;  // rows found in the prefix cache at its first admission
};

// The pool and requests after step `step.index`.
struct ServeShot {
    ServeStep step;
    std::vector<ServeBlockShot> blocks;  // [pool blocks]
    std::vector<ServeRequestShot> requests;
    int used_blocks = 0;          // blocks with a holder
    int multi_holder_blocks = 0;  // blocks with more than one holder now
    int cached_free_blocks = 0;   // blocks with no holder that keep a prefix in the cache
    int running = 0;
    // Counted: what contiguous caches for the requests running now would reserve, a context
    // each, in blocks of the pool's size (rounded up).
    int contiguous_blocks = 0;
};

// A whole serving run for a view: the setup, the prompts' words, and one shot per step so far.
struct ServeTrace {
    ServeConfig config;                // as the scheduler resolved it (pool blocks filled in)
    int context = 0;                   // the model's rows per sequence
    std::vector<std::string> prompts;  // the prompt texts, in request order
    ServeStats stats;                  // after the newest step
    // One per step so far (shared: a view's copy of the trace copies pointers).
    std::vector<std::shared_ptr<const ServeShot>> shots;
    bool finished = false;  // every request has finished
};

// The scheduler's state after its newest step (or before any: step index -1).
ServeShot serve_shot(const Scheduler& s);

}  // namespace kvs
