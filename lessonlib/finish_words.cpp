#include "lessonlib/finish_words.h"

#include <string>

namespace kvs {
namespace {

struct FinishText {
    FinishReason reason;
    const char* zh;        // as a label: 长度上限 (in English core's "length limit")
    const char* value_en;  // in a sentence: "the length limit"
    const char* value_zh;  // 达到长度上限
    const char* ended_en;  // the window's sentence (a printf format)
    const char* ended_zh;
};
const FinishText kFinishTexts[] = {
    {FinishReason::None, "仍在生成", "still running", "仍在生成", "Generation ended.",
     "生成结束。"},
    {FinishReason::EndToken, "结束 token", "the end token", "遇到结束 token",
     "Generation ended: the model chose its end token.", "生成结束：模型选择了结束 token。"},
    {FinishReason::ContextFull, "上下文已满", "a full context", "上下文已满",
     "Generation ended: the context of %d tokens is full.", "生成结束：%d 个 token 的上下文已满。"},
    {FinishReason::LengthLimit, "长度上限", "the length limit", "达到长度上限",
     "Generation ended: the limit of new tokens was reached.", "生成结束：新 token 数达到了上限。"},
};

const FinishText& text_of(FinishReason r) {
    for (const auto& t : kFinishTexts)
        if (t.reason == r) return t;
    return kFinishTexts[0];
}

}  // namespace

const char* finish_words(FinishReason r, ReportLang lang) {
    return lang == ReportLang::Zh ? text_of(r).zh : finish_reason_name(r);
}

const char* finish_value_words(FinishReason r, ReportLang lang) {
    return lang == ReportLang::Zh ? text_of(r).value_zh : text_of(r).value_en;
}

bool finish_reason_named(const std::string& name, FinishReason& out) {
    for (const auto& t : kFinishTexts)
        if (name == finish_reason_name(t.reason)) {
            out = t.reason;
            return true;
        }
    return false;
}

const char* finish_sentence(FinishReason r, ReportLang lang) {
    return lang == ReportLang::Zh ? text_of(r).ended_zh : text_of(r).ended_en;
}

}  // namespace kvs
