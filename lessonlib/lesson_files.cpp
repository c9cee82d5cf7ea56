#include "lessonlib/lesson_files.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/install_paths.h"

namespace kvs {
namespace fs = std::filesystem;

namespace {

bool is_lessons_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p / "en", ec);
}

}  // namespace

std::string lessons_dir() {
    for (const auto& p : data_folder_candidates("KVSCOPE_LESSONS", "lessons"))
        if (is_lessons_dir(p)) return p.lexically_normal().string();
    return {};
}

const std::vector<std::string>& lesson_languages() {
    static const std::vector<std::string> l = {"en", "zh"};
    return l;
}

std::vector<LessonFile> list_lessons(const std::string& lang) {
    const auto& langs = lesson_languages();
    if (std::find(langs.begin(), langs.end(), lang) == langs.end())
        throw Error("unknown lesson language '" + lang + "' (en or zh)");
    const std::string dir = lessons_dir();
    if (dir.empty())
        throw Error(
            "the lessons folder was not found (set KVSCOPE_LESSONS to the repository's "
            "lessons/ folder)");
    std::vector<LessonFile> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / lang, ec)) {
        const std::string fn = e.path().filename().string();
        if (e.path().extension() != ".md" || fn.size() < 4 ||
            !std::isdigit(static_cast<unsigned char>(fn[0])) ||
            !std::isdigit(static_cast<unsigned char>(fn[1])) || fn[2] != '-')
            continue;
        out.push_back(
            {std::atoi(fn.substr(0, 2).c_str()), e.path().stem().string(), e.path().string()});
    }
    std::sort(out.begin(), out.end(),
              [](const LessonFile& a, const LessonFile& b) { return a.name < b.name; });
    return out;
}

std::string find_lesson(const std::string& spec, const std::string& lang) {
    if (spec.find('/') != std::string::npos || spec.ends_with(".md")) {
        std::error_code ec;
        if (fs::is_directory(spec, ec)) throw Error(spec + ": is a folder, not a lesson file");
        // Missing is said so; a symlink loop or a folder without permission falls through to the
        // reader's own reason ("Too many levels of symbolic links").
        if (fs::status(spec, ec).type() == fs::file_type::not_found)
            throw Error(spec + ": no such lesson file");
        regular_file_size(spec);  // a FIFO or a device: "is not a regular file", named
        return spec;
    }
    // Lesson numbers have two digits: a longer run of digits (which atoi would overflow) is
    // matched by name only.
    const bool number =
        !spec.empty() && spec.size() <= 3 && std::all_of(spec.begin(), spec.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
    for (const auto& f : list_lessons(lang))
        if ((number && f.number == std::stoi(spec)) || f.name == spec) return f.path;
    throw Error("no lesson '" + spec + "' in " + lang + " (kvscope-cli lesson --list)");
}

}  // namespace kvs
