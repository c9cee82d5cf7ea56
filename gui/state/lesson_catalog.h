#pragma once
// The lessons the window offers: every lessons/LANG/NN-*.md, by number, with its title in each
// language, parsed when first asked for. A file that does not parse is listed with its error
// instead of its steps, so one broken file does not hide the others.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/strings.h"
#include "lessonlib/lesson.h"

namespace kvs::gui {

struct LessonEntry {
    int number = 0;
    std::array<std::string, 2> path;   // by Lang; empty when that language lacks the lesson
    std::array<std::string, 2> title;  // by Lang; the file name when it did not parse
};

class LessonCatalog {
  public:
    // Scans the lessons folder (lessonlib/lesson_files.h); error() says why when none was found.
    void load();
    const std::vector<LessonEntry>& entries() const { return entries_; }
    const std::string& error() const { return error_; }
    const LessonEntry* find(int number) const;
    // The parsed lesson in `lang` (English when that language lacks it); null with `why` set
    // when it cannot be read or parsed.
    std::shared_ptr<const Lesson> lesson(int number, Lang lang, std::string* why = nullptr);

  private:
    std::vector<LessonEntry> entries_;
    std::map<std::string, std::shared_ptr<const Lesson>> parsed_;  // by path
    std::map<std::string, std::string> errors_;                    // by path
    std::string error_;
};

}  // namespace kvs::gui
