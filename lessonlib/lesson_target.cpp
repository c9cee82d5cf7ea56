#include "lessonlib/lesson_target.h"

#include "core/model/model_config.h"
#include "core/session/attention_explain.h"
#include "core/session/session.h"
#include "core/util/error.h"
#include "core/util/numbering.h"

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

int require_explainable(const Session* s, int layer, int head, int position) {
    if (!s || !s->prefilled()) throw Error("@explain needs @prefill first");
    require_layer_and_head(s->model().config(), layer, head);
    std::string why;
    const int step = static_cast<int>(s->trace().steps().size()) - 1;
    const int index = position < 0 ? -1 : index_of_position(position);
    const auto e = explain_query(s->trace(), s->model().config(), step, layer, head, index, &why);
    if (!e) throw Error(why);
    return e->q_pos;
}

void LessonTarget::gpu() {
    throw Error("@gpu: this front end has no GPU probe");
}

void LessonTarget::serve(const ServePlan&) {
    throw Error("@serve: this front end has no serving scheduler");
}

void LessonTarget::explain(int layer, int head, int position) {
    require_explainable(facts().session, layer, head, position);
    highlight(layer, head);
}

}  // namespace kvs
