// Fuzz target: arbitrary bytes as a lesson file -> parse_lesson. Errors must be kvs::Error with
// a one-line "FILE:LINE: " message; a lesson that parses has a title and steps, and every
// directive names a line of the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/util/error.h"
#include "lessonlib/lesson_parser.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::size_t lines = 1;
    for (char ch : text) lines += ch == '\n';
    try {
        const Lesson l = parse_lesson(text, "fuzz.md");
        FUZZ_CHECK(!l.title.empty());
        FUZZ_CHECK(!l.steps.empty());
        for (const auto& s : l.steps) {
            FUZZ_CHECK(s.line >= 1 && static_cast<std::size_t>(s.line) <= lines);
            for (const auto& d : s.directives)
                FUZZ_CHECK(d.line >= s.line && static_cast<std::size_t>(d.line) <= lines);
        }
    } catch (const Error& e) {
        const std::string m = e.what();
        FUZZ_CHECK(m.rfind("fuzz.md:", 0) == 0);
        FUZZ_CHECK(m.find('\n') == std::string::npos);
    }
    return 0;
}
