#include "core/model/transformer_model.h"

#include "core/model/transformer_runner.h"

namespace kvs {

const char* pass_path_name(PassPath p) {
    switch (p) {
        case PassPath::PerOp:
            return "op by op";
        case PassPath::Graph:
            return "graph";
        case PassPath::Fused:
            return "fused";
    }
    return "?";
}

TransformerModel::TransformerModel(Checkpoint ck, BpeTokenizer tok, std::string name)
    : TransformerModel(std::move(ck), std::make_unique<BpeTokenizer>(std::move(tok)),
                       {BpeTokenizer::kBos}, std::move(name),
                       "llama2.c checkpoint, float32, mapped read-only") {}

TransformerModel::TransformerModel(Checkpoint ck, std::unique_ptr<const Tokenizer> tok,
                                   std::vector<int> stop, std::string name, std::string format)
    : ck_(std::move(ck)),
      tok_(std::move(tok)),
      stop_(std::move(stop)),
      name_(std::move(name)),
      format_(std::move(format)) {
    // A checkpoint's matrices converted on load (a GGUF's format says what it did itself).
    if (ck_.compact.held() && format_.find("matrices kept") == std::string::npos)
        format_ += "; matrices converted on load to " + ck_.compact.types() + " (" +
                   std::to_string(ck_.compact.bytes / 1000) + " kB)";
}

std::unique_ptr<TransformerModel> TransformerModel::with_weights(Checkpoint ck,
                                                                 std::string format) const {
    auto m = std::unique_ptr<TransformerModel>(new TransformerModel(*this));
    m->ck_ = std::move(ck);
    m->format_ = std::move(format);
    return m;
}

std::unique_ptr<Runner> TransformerModel::make_runner(Backend& backend) const {
    return std::make_unique<TransformerRunner>(*this, backend, 1);
}

std::unique_ptr<BatchRunner> TransformerModel::make_batch_runner(Backend& backend,
                                                                 int max_batch) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<TransformerRunner>(*this, backend, max_batch);
}

std::unique_ptr<BatchRunner> TransformerModel::make_paged_runner(Backend& backend, int max_batch,
                                                                 const KvBlockPool& pool) const {
    if (max_batch < 1 || max_batch > 64)
        throw Error("batch size " + std::to_string(max_batch) + " (must be 1..64)");
    return std::make_unique<TransformerRunner>(*this, backend, max_batch, &pool);
}

}  // namespace kvs
