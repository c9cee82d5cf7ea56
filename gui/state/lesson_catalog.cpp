#include "gui/state/lesson_catalog.h"

#include <algorithm>

#include "core/util/error.h"
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_parser.h"

namespace kvs::gui {

void LessonCatalog::load() {
    entries_.clear();
    parsed_.clear();
    errors_.clear();
    error_.clear();
    for (Lang lang : {Lang::En, Lang::Zh}) {
        std::vector<LessonFile> files;
        try {
            files = list_lessons(lang_code(lang));
        } catch (const Error& e) {
            error_ = e.what();
            continue;
        }
        for (const auto& f : files) {
            auto it = std::find_if(entries_.begin(), entries_.end(),
                                   [&](const LessonEntry& e) { return e.number == f.number; });
            if (it == entries_.end()) {
                entries_.push_back({f.number, {}, {}});
                it = entries_.end() - 1;
            }
            const int i = static_cast<int>(lang);
            it->path[i] = f.path;
            std::string why;
            const auto l = lesson(f.number, lang, &why);
            it->title[i] = l ? l->title : f.name;
        }
    }
    std::sort(entries_.begin(), entries_.end(),
              [](const LessonEntry& a, const LessonEntry& b) { return a.number < b.number; });
    if (!entries_.empty()) error_.clear();
}

const LessonEntry* LessonCatalog::find(int number) const {
    for (const auto& e : entries_)
        if (e.number == number) return &e;
    return nullptr;
}

std::shared_ptr<const Lesson> LessonCatalog::lesson(int number, Lang lang, std::string* why) {
    const LessonEntry* e = find(number);
    if (!e) {
        if (why) *why = "no lesson " + std::to_string(number);
        return nullptr;
    }
    std::string path = e->path[static_cast<int>(lang)];
    if (path.empty()) path = e->path[static_cast<int>(Lang::En)];
    if (path.empty()) path = e->path[static_cast<int>(Lang::Zh)];
    if (auto it = parsed_.find(path); it != parsed_.end()) return it->second;
    if (auto it = errors_.find(path); it != errors_.end()) {
        if (why) *why = it->second;
        return nullptr;
    }
    try {
        auto l = std::make_shared<const Lesson>(load_lesson(path));
        parsed_[path] = l;
        return l;
    } catch (const Error& err) {
        errors_[path] = err.what();
        if (why) *why = err.what();
        return nullptr;
    }
}

}  // namespace kvs::gui
