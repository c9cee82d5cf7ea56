#include "core/serving/scheduler.h"

#include <algorithm>
#include <chrono>

#include "core/util/error.h"

namespace kvs {
namespace {

int blocks_for(int rows, int block_size) {
    return (rows + block_size - 1) / block_size;
}

}  // namespace

Scheduler::Scheduler(const Model& model, Backend& backend, ServeConfig config)
    : model_(model), backend_(backend), cfg_(config) {
    const ModelConfig& c = model.config();
    if (cfg_.block_size < 1 || cfg_.block_size > c.seq_len)
        throw Error("block size " + std::to_string(cfg_.block_size) + " (must be 1.." +
                    std::to_string(c.seq_len) + ", the model's context)");
    if (cfg_.batch_limit < 1 || cfg_.batch_limit > 64)
        throw Error("batch limit " + std::to_string(cfg_.batch_limit) + " (must be 1..64)");
    if (cfg_.max_new_tokens < 1) throw Error("max new tokens must be at least 1");
    if (cfg_.window < 0 || cfg_.sinks < 0 || (cfg_.sinks > 0 && cfg_.window == 0))
        throw Error("a window of " + std::to_string(cfg_.window) + " rows with " +
                    std::to_string(cfg_.sinks) + " sinks (the window must be at least 1)");
    if (cfg_.window > 0) cfg_.prefix_sharing = false;
    const int context_blocks = blocks_for(c.seq_len, cfg_.block_size);
    if (cfg_.pool_blocks == 0) cfg_.pool_blocks = cfg_.batch_limit * context_blocks;
    if (cfg_.pool_blocks < 1)
        throw Error("a pool of " + std::to_string(cfg_.pool_blocks) + " KV blocks");
    pool_ = std::make_unique<KvBlockPool>(backend, c.n_layers, cfg_.pool_blocks, cfg_.block_size,
                                          c.kv_dim(), cfg_.cache_type);
    runner_ = model.make_paged_runner(backend, cfg_.batch_limit, *pool_);
    if (!runner_) throw Error(model.name() + " has no batched forward pass to serve with");
    if (cfg_.window > 0) runner_->set_window(cfg_.sinks, cfg_.window);
    slot_used_.assign(cfg_.batch_limit, false);
    stats_.pool_blocks = cfg_.pool_blocks;
    stats_.block_size = cfg_.block_size;
    stats_.context = c.seq_len;
    stats_.bytes_per_row = pool_->bytes_per_row();
}

int Scheduler::submit(std::vector<int> prompt, int arrival) {
    const int id = static_cast<int>(reqs_.size()), ctx = model_.config().seq_len;
    const std::string which = "request " + std::to_string(id + 1);
    if (prompt.empty()) throw Error(which + ": the prompt is empty");
    if (arrival < 0) throw Error(which + ": arrives at step " + std::to_string(arrival));
    if (static_cast<int>(prompt.size()) > ctx)
        throw Error(which + ": the prompt is " + std::to_string(prompt.size()) +
                    " tokens, longer than the model's context of " + std::to_string(ctx));
    for (int t : prompt)
        if (t < 0 || t >= model_.config().vocab_size)
            throw Error(which + ": token id " + std::to_string(t) + " is outside the vocabulary");
    // The most rows it may hold: every token but the last one sampled, within the context.
    const int rows = std::min(static_cast<int>(prompt.size()) + cfg_.max_new_tokens - 1, ctx);
    int need = blocks_for(rows, cfg_.block_size);
    if (cfg_.window > 0)  // the prompt's pass, or the sinks' blocks and the window's (+1 a side)
        need = std::min(need, std::max(blocks_for(int(prompt.size()) + 1, cfg_.block_size),
                                       blocks_for(cfg_.sinks, cfg_.block_size) +
                                           blocks_for(cfg_.window + 1, cfg_.block_size) + 1));
    if (need > cfg_.pool_blocks)
        throw Error(which + " may need " + std::to_string(need) + " blocks of " +
                    std::to_string(cfg_.block_size) + " rows, more than the pool's " +
                    std::to_string(cfg_.pool_blocks));
    ServeRequest r{id, std::move(prompt), 0, {}, 0, -1, FinishReason::None, Sampler(cfg_.sampler)};
    r.prompt_len = static_cast<int>(r.tokens.size());
    r.arrival = arrival;
    reqs_.push_back(std::move(r));
    arriving_.push_back(id);
    return id;
}

bool Scheduler::finished() const {
    return arriving_.empty() && waiting_.empty() && running_.empty();
}

int Scheduler::shareable_rows(const ServeRequest& r, const ServeRequest& other,
                              bool computed) const {
    // Rows of `other` that equal r's: the same tokens at the same positions give the same K/V
    // rows. At most all but r's last token, which r computes itself for its logits.
    const int held = computed ? other.len : static_cast<int>(other.tokens.size());
    const int limit = std::min(
        {held, static_cast<int>(r.tokens.size()) - 1, static_cast<int>(other.tokens.size())});
    int n = 0;
    while (n < limit && r.tokens[n] == other.tokens[n]) ++n;
    return n;
}

void Scheduler::admit(ServeStep& st) {
    const int bs = cfg_.block_size;
    while (!waiting_.empty() && static_cast<int>(running_.size()) < cfg_.batch_limit) {
        ServeRequest& r = reqs_[waiting_.front()];
        // The running request whose computed rows cover most of r's prompt.
        int rows = 0, soon = 0;
        const ServeRequest* donor = nullptr;
        if (cfg_.prefix_sharing)
            for (int id : running_) {
                const ServeRequest& o = reqs_[id];
                const int now = shareable_rows(r, o, true);
                if (now > rows) rows = now, donor = &o;
                soon = std::max(soon, shareable_rows(r, o, false));
            }
        // A running request computes more full blocks of r's prefix in this step's pass: r joins
        // one step later, so that the prefix is computed once.
        if (soon / bs > rows / bs) break;
        const int mapped = blocks_for(rows, bs);
        // Its prompt's blocks, and the copy of a shared, partly filled last block.
        const int need =
            blocks_for(static_cast<int>(r.tokens.size()), bs) - mapped + (rows % bs != 0 ? 1 : 0);
        if (pool_->free_blocks() < need) break;  // queued until blocks come back
        waiting_.erase(waiting_.begin());
        r.table.clear();
        for (int b = 0; b < mapped; ++b) {
            pool_->share(donor->table[b]);
            r.table.push_back(donor->table[b]);
        }
        r.len = rows;
        if (r.preempted == 0) {  // a request computed again shares what it shared before
            r.shared_rows = rows;
            stats_.shared_full_blocks += rows / bs;
            stats_.shared_partial_blocks += rows % bs != 0 ? 1 : 0;
            stats_.shared_rows += rows;
        }
        r.slot = static_cast<int>(std::find(slot_used_.begin(), slot_used_.end(), false) -
                                  slot_used_.begin());
        slot_used_[r.slot] = true;
        running_.push_back(r.id);
        st.admitted.push_back(r.id);
    }
}

int Scheduler::pass_end(const ServeRequest& r) const {
    if (cfg_.window == 0) return static_cast<int>(r.tokens.size());
    return r.len < r.prompt_len ? r.prompt_len : r.len + 1;
}

void Scheduler::let_go_outside_window(ServeRequest& r) {
    const int bs = cfg_.block_size;
    for (std::size_t b = 0; b < r.table.size(); ++b)
        if (r.table[b] >= 0 && int(b) * bs >= cfg_.sinks &&
            int(b + 1) * bs <= r.len - cfg_.window) {
            pool_->drop(r.table[b]);
            r.table[b] = -1;
        }
}

bool Scheduler::reserve(ServeRequest& r) {
    const int bs = cfg_.block_size;
    const int rows = pass_end(r);  // the rows r holds after this step
    const bool copy = r.len % bs != 0 && pool_->refs(r.table[r.len / bs]) > 1;
    const int need = blocks_for(rows, bs) - static_cast<int>(r.table.size()) + (copy ? 1 : 0);
    if (need > pool_->free_blocks()) return false;
    if (copy) {  // copy-on-write: r's rows of the shared block into a block of its own
        const int own = pool_->take();
        pool_->copy_block(r.table[r.len / bs], own, r.len % bs);
        pool_->drop(r.table[r.len / bs]);
        r.table[r.len / bs] = own;
        ++stats_.copies_on_write;
    }
    while (static_cast<int>(r.table.size()) < blocks_for(rows, bs))
        r.table.push_back(pool_->take());
    return true;
}

void Scheduler::release(ServeRequest& r) {
    for (int b : r.table)
        if (b >= 0) pool_->drop(b);
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

const ServeStep& Scheduler::step() {
    if (finished()) throw Error("every request has finished");
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
    admit(st);
    // Blocks for every running request's rows; when the pool is dry, the request admitted last
    // gives its blocks back (preempted) until the rest fit.
    for (std::size_t k = 0; k < running_.size(); ++k) {
        ServeRequest& r = reqs_[running_[k]];
        while (!reserve(r)) {
            const int last = running_.back();
            preempt(last, st);
            if (last == r.id) break;
        }
        // (r preempted itself only as the last one running: the loop ends.)
    }
    st.queued = static_cast<int>(waiting_.size());
    for (int id : waiting_)
        if (reqs_[id].waited_steps++ == 0) ++stats_.queued_requests;
    if (running_.empty()) throw Error("no request fits the KV block pool");

    std::vector<SeqInput> in;
    for (int id : running_) {
        ServeRequest& r = reqs_[id];
        runner_->set_blocks(r.slot, r.table, r.len);
        const std::span<const int> rows(r.tokens.data() + r.len, pass_end(r) - r.len);
        in.push_back({r.slot, rows});
        (r.len < r.prompt_len ? st.prefill_rows : st.decode_rows) += static_cast<int>(rows.size());
    }
    st.used_blocks = pool_->used_blocks();
    results_.resize(in.size());
    const Capture none{false, false, -1, false, false, false, false, false, false};
    const auto t0 = std::chrono::steady_clock::now();
    runner_->forward_batch(in, none, results_);
    backend_.synchronize();
    // A request computed again after preemption samples only once its pass reaches its last
    // token (-1 until then).
    std::vector<int> chosen(running_.size(), -1);
    for (std::size_t j = 0; j < running_.size(); ++j) {
        ServeRequest& r = reqs_[running_[j]];
        if (pass_end(r) == static_cast<int>(r.tokens.size()))
            chosen[j] = r.sampler.sample(results_[j].logits).token;
    }
    st.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const auto& stops = model_.stop_tokens();
    std::vector<const std::vector<int>*> tables;
    std::vector<int> lens;
    const std::vector<int> ran = running_;
    for (std::size_t j = 0; j < ran.size(); ++j) {
        ServeRequest& r = reqs_[ran[j]];
        r.len = pass_end(r);
        tables.push_back(&r.table);
        lens.push_back(r.len);
        if (chosen[j] < 0) continue;
        r.tokens.push_back(chosen[j]);
        r.finish = stop_rule(std::find(stops.begin(), stops.end(), chosen[j]) != stops.end(),
                             static_cast<int>(r.tokens.size()), model_.config().seq_len,
                             r.generated(), cfg_.max_new_tokens);
        ++stats_.generated;
    }
    count_blocks(stats_, tables, lens);
    if (cfg_.window > 0)
        for (int id : ran) let_go_outside_window(reqs_[id]);
    stats_.peak_running = std::max(stats_.peak_running, static_cast<int>(ran.size()));
    stats_.seconds += st.wall_seconds;
    // Finished requests leave now: their blocks are free for the next step's admissions.
    for (int id : ran)
        if (reqs_[id].finish != FinishReason::None) {
            release(reqs_[id]);
            st.retired.push_back(id);
        }
    steps_.push_back(std::move(st));
    return steps_.back();
}

}  // namespace kvs
