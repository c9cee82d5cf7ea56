#include "lessonlib/lesson_target.h"

#include "core/model/model_config.h"
#include "core/session/attention_explain.h"
#include "core/session/session.h"
#include "core/util/error.h"

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

int require_explainable(const Session* s, int layer, int head, int row) {
    if (!s || !s->prefilled()) throw Error("@explain needs @prefill first");
    require_layer_and_head(s->model().config(), layer, head);
    std::string why;
    const int step = static_cast<int>(s->trace().steps().size()) - 1;
    if (row < 0) row = s->trace().back().attention.rows - 1;
    if (!explain_attention(s->trace(), s->model().config(), step, layer, head, row, &why))
        throw Error(why);
    return row;
}

void LessonTarget::gpu() {
    throw Error("@gpu: this front end has no GPU probe");
}

void LessonTarget::serve(const ServePlan&) {
    throw Error("@serve: this front end has no serving scheduler");
}

void LessonTarget::explain(int layer, int head, int row) {
    require_explainable(facts().session, layer, head, row);
    highlight(layer, head);
}

}  // namespace kvs
