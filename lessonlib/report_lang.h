#pragma once
// The language a lesson's report is written in (the log under a step, `kvscope-cli lesson`):
// English or Simplified Chinese. Each sentence is written in both at the place that builds it
// (words() picks one), so a sentence and its translation are read and changed together; the
// window's own words are gui/state/strings.h, which lessonlib cannot reach (layering).
#include <string>

namespace kvs {

enum class ReportLang { En, Zh };

// "zh" is Chinese, anything else English.
inline ReportLang report_lang_from_code(const std::string& code) {
    return code == "zh" ? ReportLang::Zh : ReportLang::En;
}
inline const char* report_lang_code(ReportLang l) {
    return l == ReportLang::Zh ? "zh" : "en";
}

// `en` or `zh`, as the report's language asks.
struct Words {
    ReportLang lang = ReportLang::En;
    bool zh() const { return lang == ReportLang::Zh; }
    const char* operator()(const char* en, const char* zh_text) const {
        return zh() ? zh_text : en;
    }
};

}  // namespace kvs
