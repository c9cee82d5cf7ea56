#pragma once
// The window's words in English and Simplified Chinese: one table, keyed by the English text, so
// the code reads as English (`tr("Reset")`) and a missing translation shows English rather than
// nothing. Format strings keep their printf conversions in the same order in both languages (a
// test checks every pair, and that every tr("...") in gui/ has a row).
#include <string>
#include <vector>

#include "lessonlib/report_lang.h"

namespace kvs::gui {

enum class Lang { En, Zh };

const char* lang_code(Lang l);                 // "en", "zh"
Lang lang_from_code(const std::string& code);  // "zh" is Chinese, anything else English

// The same language for the lesson library's words (reports, checks, engine messages).
inline ReportLang report_lang(Lang l) {
    return l == Lang::Zh ? ReportLang::Zh : ReportLang::En;
}

// The language tr() answers in; the window sets it once per frame.
void set_language(Lang l);
Lang language();

// `en` in the current language.
const char* tr(const char* en);
// `en` in language `l`.
const char* tr(const char* en, Lang l);
// A query row named by its token's position, in the current language, numbered as everywhere
// (core/util/numbering.h): "the query at position 5", 位置 5 的查询.
std::string query_row_label(int token_index);

// Marks a string that is stored in English and put through tr() where it is shown.
constexpr const char* tr_later(const char* en) {
    return en;
}

struct UiString {
    const char* en;
    const char* zh;
};
const std::vector<UiString>& ui_strings();

// The printf conversions of a format string in order ("%d of %s" -> "ds"), for the tests.
std::string printf_conversions(const char* fmt);

}  // namespace kvs::gui
