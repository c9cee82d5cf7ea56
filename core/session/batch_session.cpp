#include "core/session/batch_session.h"

#include <algorithm>
#include <chrono>

#include "core/model/backend.h"
#include "core/util/error.h"

namespace kvs {

BatchSession::BatchSession(const Model& model, Backend& backend, int max_new_tokens,
                           SamplerConfig sampler)
    : model_(model), backend_(backend), max_new_(max_new_tokens), sampler_(sampler) {
    if (max_new_tokens < 1) throw Error("max new tokens must be at least 1");
}

void BatchSession::set_prompts(const std::vector<std::string>& prompts) {
    const int n = static_cast<int>(prompts.size());
    if (n < 1 || n > kMaxBatch)
        throw Error("batch of " + std::to_string(n) + " prompts (1.." + std::to_string(kMaxBatch) +
                    ")");
    const int ctx = model_.config().seq_len;
    std::vector<Seq> seqs;
    for (int i = 0; i < n; ++i) {
        SamplerConfig sc = sampler_;
        sc.seed += static_cast<std::uint64_t>(i);
        Seq s{model_.tokenizer().encode(prompts[i]), 0, {}, Sampler(sc)};
        s.prompt_len = static_cast<int>(s.tokens.size());
        if (s.prompt_len == 0) throw Error("prompt " + std::to_string(i + 1) + " is empty");
        if (s.prompt_len + max_new_ - 1 > ctx)
            throw Error("prompt " + std::to_string(i + 1) + " (" + std::to_string(s.prompt_len) +
                        " tokens) and " + std::to_string(max_new_) +
                        " new tokens do not fit the context of " + std::to_string(ctx));
        seqs.push_back(std::move(s));
    }
    if (!runner_ || runner_->max_batch() < n)
        runner_ = model_.make_batch_runner(backend_, kMaxBatch);
    if (!runner_) throw Error(model_.name() + " has no batched forward pass");
    for (int i = 0; i < runner_->max_batch(); ++i) runner_->reset_slot(i);
    seqs_ = std::move(seqs);
    steps_.clear();
}

KvShape BatchSession::kv(int seq) const {
    if (seq < 0 || seq >= size())
        throw Error("no sequence " + std::to_string(seq) + " in the batch");
    return runner_->kv(seq);
}

void BatchSession::read_kv(int seq, std::vector<float>& out) {
    runner_->read_kv_rows(seq, 0, kv(seq).len, out);
}

bool BatchSession::finished() const {
    return std::all_of(seqs_.begin(), seqs_.end(),
                       [](const Seq& s) { return s.finish != FinishReason::None; });
}

const BatchStepRecord& BatchSession::step() {
    if (seqs_.empty()) throw Error("no prompts set");
    if (finished()) throw Error("every sequence has finished");
    BatchStepRecord r;
    r.index = static_cast<int>(steps_.size());
    r.phase = steps_.empty() ? Phase::Prefill : Phase::Decode;
    std::vector<SeqInput> in;
    std::vector<int> which;
    for (int i = 0; i < size(); ++i) {
        Seq& s = seqs_[i];
        if (s.finish != FinishReason::None) continue;
        const int pos0 = runner_->kv(i).len;
        std::span<const int> toks = r.phase == Phase::Prefill
                                        ? std::span<const int>(s.tokens)
                                        : std::span<const int>(&s.tokens.back(), 1);
        in.push_back({i, toks});
        which.push_back(i);
        r.rows += static_cast<int>(toks.size());
        r.counts += model_.count_forward(pos0, static_cast<int>(toks.size()));
    }
    r.active = static_cast<int>(in.size());
    results_.resize(in.size());
    const Capture none{false, false, -1};
    backend_.reset_op_times();
    const auto t0 = std::chrono::steady_clock::now();
    runner_->forward_batch(in, none, results_);
    backend_.synchronize();
    r.token_out.assign(size(), -1);
    for (std::size_t j = 0; j < which.size(); ++j)
        r.token_out[which[j]] = seqs_[which[j]].sampler.sample(results_[j].logits).token;
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.op_times = backend_.op_times();

    const auto& stops = model_.stop_tokens();
    for (int i : which) {
        Seq& s = seqs_[i];
        s.tokens.push_back(r.token_out[i]);
        const int generated = static_cast<int>(s.tokens.size()) - s.prompt_len;
        s.finish = stop_rule(std::find(stops.begin(), stops.end(), r.token_out[i]) != stops.end(),
                             static_cast<int>(s.tokens.size()), model_.config().seq_len, generated,
                             max_new_);
    }
    steps_.push_back(std::move(r));
    return steps_.back();
}

}  // namespace kvs
