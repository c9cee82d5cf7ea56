#include "core/model/replay_model.h"

#include "core/util/error.h"

namespace kvs {

RecordedTokenizer::RecordedTokenizer(int vocab_size, std::map<int, std::string> pieces, int bos)
    : vocab_(vocab_size), pieces_(std::move(pieces)), bos_(bos) {}

std::vector<int> RecordedTokenizer::encode(std::string_view) const {
    throw Error("a recorded run has no tokenizer to read a new prompt with: open a model for that");
}

std::string RecordedTokenizer::decode(int, int token) const {
    return piece(token);
}

std::string RecordedTokenizer::piece(int token) const {
    const auto it = pieces_.find(token);
    return it == pieces_.end() ? "?" : it->second;
}

ReplayModel::ReplayModel(std::string name, ModelConfig config, RecordedTokenizer tok,
                         std::string format, std::size_t parameters)
    : name_(std::move(name)),
      config_(std::move(config)),
      tok_(std::move(tok)),
      format_(std::move(format)),
      parameters_(parameters > 0 ? parameters : config_.parameter_count()) {}

std::unique_ptr<Runner> ReplayModel::make_runner(Backend&) const {
    throw Error("a recorded run has no weights to compute with: open a model to run steps");
}

StepCounts ReplayModel::count_forward(int pos0, int T) const {
    return count_llama_forward(config_, pos0, T);
}

}  // namespace kvs
