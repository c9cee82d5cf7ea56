#include "lessonlib/lesson_target.h"

#include "core/error.h"
#include "core/model_config.h"

namespace kvs {

void require_prompt_before_prefill(bool has_prompt, bool prefilled) {
    if (!has_prompt) throw Error("no prompt set (@prompt comes before @prefill)");
    if (prefilled) throw Error("the prompt is already prefilled (@reset starts over)");
}

void require_prefill_before_decode(bool prefilled) {
    if (!prefilled) throw Error("@decode needs @prefill first");
}

void require_layer_and_head(const ModelConfig& c, int layer, int head) {
    if (layer < 0 || layer >= c.n_layers)
        throw Error("layer " + std::to_string(layer) + " does not exist (the model has " +
                    std::to_string(c.n_layers) + ")");
    if (head < 0 || head >= c.n_heads)
        throw Error("head " + std::to_string(head) + " does not exist (the model has " +
                    std::to_string(c.n_heads) + ")");
}

}  // namespace kvs
