#pragma once
// Where the lessons live: lessons/LANG/NN-name.md. The folder is found like the default model:
// $KVSCOPE_LESSONS, then lessons/ beside the executable, ../lessons, ../share/kvscope/lessons,
// then the source tree's lessons/.
#include <string>
#include <vector>

namespace kvs {

// The lessons folder, or empty when none is found.
std::string lessons_dir();
// Languages with lessons: "en", "zh".
const std::vector<std::string>& lesson_languages();

struct LessonFile {
    int number = 0;    // NN
    std::string name;  // NN-name without .md
    std::string path;
};
// The lessons of one language, by number. Throws kvs::Error for an unknown language or when
// the folder cannot be found.
std::vector<LessonFile> list_lessons(const std::string& lang);

// `spec` is a path to a lesson file, a number ("3", "03") or a name ("03-decode"); a number or
// name is looked up in `lang`. Throws kvs::Error when nothing matches.
std::string find_lesson(const std::string& spec, const std::string& lang);

}  // namespace kvs
