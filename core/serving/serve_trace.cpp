#include "core/serving/serve_trace.h"

#include <algorithm>

namespace kvs {

const char* serve_state_name(ServeState s) {
    switch (s) {
        case ServeState::NotArrived:
            return "not arrived";
        case ServeState::Queued:
            return "queued";
        case ServeState::Running:
            return "running";
        case ServeState::Finished:
            return "finished";
        case ServeState::Preempted:
            return "preempted";
    }
    return "?";
}

ServeShot serve_shot(const Scheduler& s) {
    ServeShot shot;
    if (!s.steps().empty())
        shot.step = s.steps().back();
    else
        shot.step.index = -1;
    const int bs = s.blocks().block_size();
    shot.blocks.resize(s.blocks().n_blocks());
    for (int b = 0; b < s.blocks().n_blocks(); ++b) shot.blocks[b].cached = s.blocks().cached(b);
    const auto& pre = shot.step.preempted;
    for (const ServeRequest& r : s.requests()) {
        ServeRequestShot q;
        q.table = r.table;
        q.len = r.len;
        q.prompt_len = r.prompt_len;
        q.generated = r.generated();
        q.cached_rows = r.cached_rows;
        // A running request holds a runner slot; a finished one has its reason; the rest wait,
        // those whose blocks this step took back marked so, those whose arrival step is still
        // to come apart (before the first step, the ones arriving at step 0 wait in line).
        if (r.finish != FinishReason::None)
            q.state = ServeState::Finished;
        else if (r.slot >= 0)
            q.state = ServeState::Running;
        else if (std::find(pre.begin(), pre.end(), r.id) != pre.end())
            q.state = ServeState::Preempted;
        else if (r.arrival > std::max(shot.step.index, 0))
            q.state = ServeState::NotArrived;
        if (q.state == ServeState::Running) ++shot.running;
        // Logical block i holds positions [i * bs, (i + 1) * bs): filled up to len.
        for (std::size_t i = 0; i < r.table.size(); ++i) {
            const int b = r.table[i];
            if (b < 0 || b >= static_cast<int>(shot.blocks.size())) continue;
            ServeBlockShot& blk = shot.blocks[b];
            blk.holders.push_back(r.id);
            blk.rows = std::max(blk.rows, std::clamp(r.len - static_cast<int>(i) * bs, 0, bs));
        }
        shot.requests.push_back(std::move(q));
    }
    for (ServeBlockShot& b : shot.blocks) {
        if (!b.holders.empty()) ++shot.used_blocks;
        if (b.holders.size() > 1) ++shot.multi_holder_blocks;
        // A cached block no one holds keeps its rows: all of them, being a full block.
        if (b.holders.empty() && b.cached) {
            ++shot.cached_free_blocks;
            b.rows = bs;
        }
    }
    const int ctx = s.stats().context;
    shot.contiguous_blocks = shot.running * ((ctx + bs - 1) / bs);
    return shot;
}

}  // namespace kvs
