// Fuzz target: arbitrary bytes as the window's settings file -> parse_settings. Every problem is
// one line without control bytes; what was read, written back and read again has no problem left
// and reads the same (nothing bad is ever saved).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gui/state/settings.h"
#include "tests/fuzz/fuzz_check.h"

using namespace kvs::gui;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> problems;
    const Settings s = parse_settings(text, "settings.txt", &problems);
    for (const auto& p : problems) {
        FUZZ_CHECK(p.rfind("settings.txt:", 0) == 0);
        for (char c : p) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    }
    std::vector<std::string> again;
    const Settings back = parse_settings(settings_text(s), "again", &again);
    FUZZ_CHECK(again.empty());
    std::vector<std::string> third;
    FUZZ_CHECK(parse_settings(settings_text(back), "third", &third) == back);
    FUZZ_CHECK(third.empty());
    return 0;
}
