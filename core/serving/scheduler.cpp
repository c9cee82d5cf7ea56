#include "core/serving/scheduler.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "core/util/error.h"

namespace kvs {
namespace {

int blocks_for(int rows, int block_size) {
    return (rows + block_size - 1) / block_size;
}

// The options checked, the pool's size filled in.
ServeConfig validated(const Model& model, ServeConfig cfg) {
    const ModelConfig& c = model.config();
    const std::string bs = std::to_string(cfg.block_size);
    if (cfg.block_size < 1 || cfg.block_size > c.seq_len)
        throw Error("block size " + bs + " (must be 1.." + std::to_string(c.seq_len) +
                    ", the model's context)");
    if (cfg.max_num_seqs < 1 || cfg.max_num_seqs > 64)
        throw Error("max-num-seqs " + std::to_string(cfg.max_num_seqs) + " (must be 1..64)");
    if (cfg.max_num_batched_tokens < 0)
        throw Error("a token budget of " + std::to_string(cfg.max_num_batched_tokens));
    if (cfg.max_num_batched_tokens > 0 && cfg.max_num_batched_tokens < cfg.block_size)
        throw Error("a token budget of " + std::to_string(cfg.max_num_batched_tokens) +
                    " rows a step, less than one block of " + bs + " rows");
    if (cfg.max_new_tokens < 1) throw Error("max new tokens must be at least 1");
    if (cfg.window < 0 || cfg.sinks < 0 || (cfg.sinks > 0 && cfg.window == 0))
        throw Error("a window of " + std::to_string(cfg.window) + " rows with " +
                    std::to_string(cfg.sinks) + " sinks (the window must be at least 1)");
    if (cfg.window > 0) cfg.prefix_caching = false;
    const int context_blocks = blocks_for(c.seq_len, cfg.block_size);
    if (cfg.pool_blocks == 0) cfg.pool_blocks = cfg.max_num_seqs * context_blocks;
    if (cfg.pool_blocks < 1)
        throw Error("a pool of " + std::to_string(cfg.pool_blocks) + " KV blocks");
    if (cfg.window > 0) {
        // A decode pass holds the sinks' blocks and the window's with the new row (one block more
        // where they do not line up with the blocks).
        const int need =
            blocks_for(cfg.sinks, cfg.block_size) + blocks_for(cfg.window + 1, cfg.block_size) + 1;
        if (need > cfg.pool_blocks)
            throw Error("a window of " + std::to_string(cfg.window) + " rows and " +
                        std::to_string(cfg.sinks) + " sinks needs " + std::to_string(need) +
                        " blocks of " + bs + " rows, more than the pool's " +
                        std::to_string(cfg.pool_blocks));
    }
    return cfg;
}

}  // namespace

const char* wait_reason_name(WaitReason r) {
    switch (r) {
        case WaitReason::Places:
            return "places";
        case WaitReason::Budget:
            return "budget";
        case WaitReason::Blocks:
            return "blocks";
        case WaitReason::Preemption:
            return "preemption";
    }
    return "?";
}

Scheduler::Scheduler(const Model& model, Backend& backend, ServeConfig config)
    : model_(model),
      backend_(backend),
      cfg_(validated(model, std::move(config))),
      cache_(cfg_.pool_blocks, cfg_.block_size) {
    const ModelConfig& c = model.config();
    pool_ = std::make_unique<KvBlockPool>(backend, c.n_layers, cfg_.pool_blocks, cfg_.block_size,
                                          c.kv_dim(), cfg_.cache_type, cfg_.scale_mode);
    if (pool_->quantised() && cfg_.scale_mode != KvScaleMode::Token) pool_->set_scales(cfg_.scales);
    runner_ = model.make_paged_runner(backend, cfg_.max_num_seqs, *pool_);
    if (!runner_) throw Error(model.name() + " has no batched forward pass to serve with");
    if (cfg_.window > 0) runner_->set_window(cfg_.sinks, cfg_.window, cfg_.sink_positions);
    slot_used_.assign(cfg_.max_num_seqs, false);
    stats_.pool_blocks = cfg_.pool_blocks;
    stats_.block_size = cfg_.block_size;
    stats_.context = c.seq_len;
    stats_.bytes_per_row = pool_->bytes_per_row();
}

int Scheduler::context_limit() const {
    // Under a window a RoPE model's positions may run on past its context (the runner's rule).
    const ModelConfig& c = model_.config();
    return cfg_.window > 0 && !c.gpt2() ? INT_MAX / 2 : c.seq_len;
}

int Scheduler::submit(std::vector<int> prompt, int arrival) {
    const int id = static_cast<int>(reqs_.size()), ctx = model_.config().seq_len;
    const std::string which = "request " + std::to_string(id + 1);
    if (prompt.empty()) throw Error(which + ": the prompt is empty");
    if (arrival < 0) throw Error(which + ": arrives at step " + std::to_string(arrival));
    const int n = static_cast<int>(prompt.size());
    if (n > ctx)
        throw Error(which + ": the prompt is " + std::to_string(n) +
                    " tokens, longer than the model's context of " + std::to_string(ctx));
    for (int t : prompt)
        if (t < 0 || t >= model_.config().vocab_size)
            throw Error(which + ": token id " + std::to_string(t) + " is outside the vocabulary");
    const int budget = cfg_.max_num_batched_tokens;
    if (cfg_.window > 0 && budget > 0 && n > budget)
        throw Error(which + ": a window computes its prompt of " + std::to_string(n) +
                    " tokens in one pass, more than the budget of " + std::to_string(budget) +
                    " rows a step");
    // The most rows it may hold at once: every token but the last one sampled, within the
    // context; under a window, its prompt's pass or a decode pass's sinks and window.
    const long long all =
        std::min<long long>((long long)n + cfg_.max_new_tokens - 1, context_limit());
    int need = blocks_for(static_cast<int>(std::min<long long>(all, INT_MAX / 2)), cfg_.block_size);
    if (cfg_.window > 0)
        need = std::min(need, std::max(blocks_for(n + 1, cfg_.block_size),
                                       blocks_for(cfg_.sinks, cfg_.block_size) +
                                           blocks_for(cfg_.window + 1, cfg_.block_size) + 1));
    if (need > cfg_.pool_blocks)
        throw Error(which + " may need " + std::to_string(need) + " blocks of " +
                    std::to_string(cfg_.block_size) + " rows, more than the pool's " +
                    std::to_string(cfg_.pool_blocks));
    ServeRequest r{id, std::move(prompt), 0, {}, 0, -1, FinishReason::None, Sampler(cfg_.sampler)};
    r.prompt_len = n;
    r.arrival = arrival;
    reqs_.push_back(std::move(r));
    arriving_.push_back(id);
    return id;
}

bool Scheduler::finished() const {
    return arriving_.empty() && waiting_.empty() && running_.empty();
}

int Scheduler::rows_wanted(const ServeRequest& r, int budget) const {
    const int rest = static_cast<int>(r.tokens.size()) - r.len;
    if (cfg_.window == 0) return std::min(rest, budget);
    // Under a window: the prompt in one pass, then one row a pass, also when a preempted request
    // is computed again (so its rows are the ones first computed); a pass is never chunked.
    const int want = r.len < r.prompt_len ? r.prompt_len - r.len : 1;
    return want <= budget ? want : 0;
}

bool Scheduler::allocate(ServeRequest& r, int rows) {
    const int bs = cfg_.block_size, end = r.len + rows;
    const int need = blocks_for(end, bs) - static_cast<int>(r.table.size());
    if (need > cache_.free_blocks()) return false;
    while (static_cast<int>(r.table.size()) < blocks_for(end, bs)) r.table.push_back(cache_.take());
    // The blocks this pass fills remember their prefix now: a request admitted after this one,
    // in this very step or later, finds them.
    if (cfg_.prefix_caching)
        for (int b = r.len / bs; b < end / bs; ++b) cache_.remember(r.table[b], r.tokens, b);
    return true;
}

void Scheduler::let_go_outside_window(ServeRequest& r) {
    const int bs = cfg_.block_size;
    for (std::size_t b = 0; b < r.table.size(); ++b)
        if (r.table[b] >= 0 && int(b) * bs >= cfg_.sinks &&
            int(b + 1) * bs <= r.len - cfg_.window) {
            cache_.drop(r.table[b]);
            r.table[b] = -1;
        }
}

void Scheduler::release(ServeRequest& r) {
    // The last block first: of one request's blocks, its later ones are evicted first.
    for (auto it = r.table.rbegin(); it != r.table.rend(); ++it)
        if (*it >= 0) cache_.drop(*it);
    r.table.clear();
    r.len = 0;
    if (r.slot >= 0) slot_used_[r.slot] = false;
    r.slot = -1;
    running_.erase(std::find(running_.begin(), running_.end(), r.id));
}

void Scheduler::preempt(int id, ServeStep& st) {
    ServeRequest& r = reqs_[id];
    release(r);
    ++r.preempted;
    ++stats_.preemptions;
    waiting_.insert(waiting_.begin(), id);
    st.preempted.push_back(id);
}

void Scheduler::schedule_running(ServeStep& st, std::vector<ServeChunk>& pass, int& budget) {
    // Oldest first; when the pool is dry, the request admitted last gives its blocks back
    // (preempted) until this one's fit. A request past the budget waits for the next step.
    for (std::size_t k = 0; k < running_.size() && budget > 0; ++k) {
        ServeRequest& r = reqs_[running_[k]];
        const int rows = rows_wanted(r, budget);
        if (rows == 0) continue;
        bool fits = true;
        while (!allocate(r, rows)) {
            const int last = running_.back();
            preempt(last, st);
            if (last == r.id) {
                fits = false;
                break;
            }
        }
        if (!fits) break;  // it was the last one running: the loop is over
        pass.push_back({r.id, r.len, rows, true});
        budget -= rows;
    }
}

void Scheduler::admit(ServeStep& st, std::vector<ServeChunk>& pass, int& budget) {
    const int bs = cfg_.block_size;
    while (!waiting_.empty()) {
        if (static_cast<int>(running_.size()) >= cfg_.max_num_seqs) {
            st.waited_for = WaitReason::Places;
            return;
        }
        ServeRequest& r = reqs_[waiting_.front()];
        // The prefix cache's blocks for its first rows: all but its last token, which it
        // computes itself for its logits.
        const std::vector<int> found =
            cfg_.prefix_caching ? cache_.find(r.tokens, static_cast<int>(r.tokens.size()) - 1)
                                : std::vector<int>{};
        r.len = static_cast<int>(found.size()) * bs;
        const int rows = rows_wanted(r, budget);
        if (rows == 0) {
            r.len = 0;
            st.waited_for = WaitReason::Budget;
            return;
        }
        // Blocks taken now: the new ones, and the found ones no request holds (they leave the
        // free queue).
        int from_free = 0;
        for (int b : found) from_free += cache_.refs(b) == 0 ? 1 : 0;
        const int fresh = blocks_for(r.len + rows, bs) - static_cast<int>(found.size());
        if (fresh + from_free > cache_.free_blocks()) {
            r.len = 0;
            st.waited_for = WaitReason::Blocks;
            return;
        }
        waiting_.erase(waiting_.begin());
        for (int b : found) cache_.hold(b);
        r.table = found;
        allocate(r, rows);
        if (r.preempted == 0) r.cached_rows = r.len;
        stats_.cached_blocks_found += static_cast<int>(found.size());
        stats_.cached_rows += r.len;
        st.cached_blocks_found += static_cast<int>(found.size());
        r.slot = static_cast<int>(std::find(slot_used_.begin(), slot_used_.end(), false) -
                                  slot_used_.begin());
        slot_used_[r.slot] = true;
        running_.push_back(r.id);
        st.admitted.push_back(r.id);
        pass.push_back({r.id, r.len, rows, true});
        budget -= rows;
    }
}

const ServeStep& Scheduler::step() {
    if (finished()) throw Error("every request has finished");
    const auto t0 = std::chrono::steady_clock::now();
    ServeStep st;
    // Nothing waits or runs: the clock goes on to the next arrival (no step without a pass).
    if (waiting_.empty() && running_.empty()) {
        int next = reqs_[arriving_.front()].arrival;
        for (int id : arriving_) next = std::min(next, reqs_[id].arrival);
        clock_ = std::max(clock_, next);
    }
    st.index = clock_++;
    // Requests whose arrival step has come join the queue's end.
    for (auto it = arriving_.begin(); it != arriving_.end();)
        if (reqs_[*it].arrival <= st.index) {
            waiting_.push_back(*it);
            st.arrived.push_back(*it);
            it = arriving_.erase(it);
        } else {
            ++it;
        }
    int budget = cfg_.max_num_batched_tokens > 0 ? cfg_.max_num_batched_tokens : INT_MAX;
    std::vector<ServeChunk> pass;
    schedule_running(st, pass, budget);
    if (st.preempted.empty())
        admit(st, pass, budget);
    else
        st.waited_for = WaitReason::Preemption;  // vLLM admits nobody in a step that preempted
    st.queued = static_cast<int>(waiting_.size());
    if (st.queued > 0) stats_.waits[static_cast<int>(st.waited_for)] += st.queued;
    for (int id : waiting_)
        if (reqs_[id].waited_steps++ == 0) ++stats_.queued_requests;
    if (pass.empty()) {
        // Possible only when every running request gave its blocks back: the next step admits.
        if (running_.empty() && st.preempted.empty())
            throw Error("no request fits the KV block pool");
    }

    // The pass: each request's rows through its block table.
    std::vector<SeqInput> in;
    for (ServeChunk& c : pass) {
        ServeRequest& r = reqs_[c.request];
        runner_->set_blocks(r.slot, r.table, r.len);
        in.push_back({r.slot, std::span<const int>(r.tokens.data() + r.len, c.rows)});
        c.prefill = !(c.rows == 1 && r.len >= r.prompt_len &&
                      r.len + 1 == static_cast<int>(r.tokens.size()));
        (c.prefill ? st.prefill_rows : st.decode_rows) += c.rows;
        if (c.prefill && c.first + c.rows < r.prompt_len) ++st.partial_prompts;
    }
    const auto& stops = model_.stop_tokens();
    if (!in.empty()) {
        results_.resize(in.size());
        const Capture none{false, false, -1, false, false, false, false, false};
        runner_->forward_batch(in, none, results_);
        backend_.synchronize();
    }
    // A request samples once its pass reaches its last token (a prompt's last chunk, a decode
    // row, a preempted request's last token computed again).
    for (std::size_t j = 0; j < pass.size(); ++j) {
        ServeRequest& r = reqs_[pass[j].request];
        r.len += pass[j].rows;
        if (r.len != static_cast<int>(r.tokens.size())) continue;
        const int token = r.sampler.sample(results_[j].logits).token;
        r.tokens.push_back(token);
        r.finish = stop_rule(std::find(stops.begin(), stops.end(), token) != stops.end(),
                             static_cast<int>(r.tokens.size()), context_limit(), r.generated(),
                             cfg_.max_new_tokens);
        ++stats_.generated;
    }
    std::vector<const std::vector<int>*> tables;
    std::vector<int> lens;
    for (int id : running_) {
        tables.push_back(&reqs_[id].table);
        lens.push_back(reqs_[id].len);
    }
    count_blocks(stats_, tables, lens);
    if (cfg_.window > 0)
        for (int id : running_) let_go_outside_window(reqs_[id]);
    stats_.peak_running = std::max(stats_.peak_running, static_cast<int>(running_.size()));
    // Finished requests leave now: their blocks are free (and cached) for the next admissions.
    for (const ServeChunk& c : pass)
        if (reqs_[c.request].finish != FinishReason::None) {
            release(reqs_[c.request]);
            st.retired.push_back(c.request);
        }
    st.chunks = std::move(pass);
    st.used_blocks = cache_.used_blocks();
    st.cached_free_blocks = cache_.cached_free_blocks();
    stats_.evictions = cache_.evictions();
    st.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats_.seconds += st.wall_seconds;
    steps_.push_back(std::move(st));
    return steps_.back();
}

}  // namespace kvs
