#pragma once
// The model of a recorded run (core/trace_reader.h): its shapes and the pieces of the tokens the
// trace names, without weights, so every view works on a machine that has no model file. It
// counts FLOPs from its shapes like the model it stands for; it cannot run a step.
#include <map>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace kvs {

// The pieces a trace recorded (its tokens, each step's chosen token and top-k), by id.
class RecordedTokenizer final : public Tokenizer {
  public:
    RecordedTokenizer(int vocab_size, std::map<int, std::string> pieces, int bos);
    int vocab_size() const override { return vocab_; }
    // A replay has no vocabulary to encode with: throws kvs::Error.
    std::vector<int> encode(std::string_view text) const override;
    std::string decode(int prev, int token) const override;
    std::string piece(int token) const override;  // "?" for an id the trace never named
    std::string kind() const override { return "the pieces a recorded trace names"; }
    int bos() const override { return bos_; }

  private:
    int vocab_;
    std::map<int, std::string> pieces_;
    int bos_;
};

class ReplayModel final : public Model {
  public:
    // `format`: where the recorded model's weights came from; `parameters`: its count (0: the
    // count ModelConfig gives for these shapes).
    ReplayModel(std::string name, ModelConfig config, RecordedTokenizer tok, std::string format,
                std::size_t parameters);
    std::string name() const override { return name_; }
    const ModelConfig& config() const override { return config_; }
    const Tokenizer& tokenizer() const override { return tok_; }
    std::string format() const override { return format_; }
    // Throws kvs::Error: a recorded run has no weights.
    std::unique_ptr<Runner> make_runner(Backend& backend) const override;
    std::vector<int> stop_tokens() const override { return {}; }
    StepCounts count_forward(int pos0, int T) const override;
    std::size_t parameter_count() const override { return parameters_; }

  private:
    std::string name_;
    ModelConfig config_;
    RecordedTokenizer tok_;
    std::string format_;
    std::size_t parameters_;
};

}  // namespace kvs
