#include "core/serving/prompt_file.h"

#include <algorithm>

#include "core/util/error.h"
#include "core/util/text_file.h"
#include "core/util/utf8.h"

namespace kvs {
namespace {

PromptLine parse_prompt_line(const std::string& path, int line_no, const std::string& line) {
    if (line[0] != '@') return {line, 0};
    const std::size_t space = line.find(' ');
    const std::string step = line.substr(1, space == std::string::npos ? space : space - 1);
    const bool digits =
        !step.empty() && step.size() <= 8 &&
        std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int n = digits ? std::stoi(step) : -1;
    if (n < 0 || n > (1 << 24) || space == std::string::npos || space + 1 == line.size())
        throw Error(path + " line " + std::to_string(line_no) + ": \"" +
                    escape_for_one_line(line.substr(0, 40)) +
                    "\" is not an arrival and a prompt (\"@N text\", N a step 0..16777216)");
    return {line.substr(space + 1), n};
}

}  // namespace

std::vector<PromptLine> read_prompt_file(const std::string& path) {
    // A UTF-8 byte order mark dropped, UTF-16 or UTF-32 refused by name (core/util/text_file.h).
    const std::string bytes = read_text_file(path, std::size_t(16) << 20);
    std::vector<PromptLine> prompts;
    std::string line;
    int line_no = 0;
    const auto end_line = [&] {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) prompts.push_back(parse_prompt_line(path, line_no, line));
        line.clear();
    };
    for (char c : bytes) {
        if (c == '\n')
            end_line();
        else
            line.push_back(c);
    }
    end_line();
    if (prompts.empty()) throw Error(path + ": no prompts in the file (one a line)");
    return prompts;
}

std::vector<PromptLine> builtin_serve_prompts() {
    const std::string prefix =
        "Once upon a time, there was a little girl named Lily. She loved to ";
    std::vector<PromptLine> out;
    for (const char* end : {"play with her ball", "draw pictures", "sing songs", "play in the park",
                            "read books", "bake cookies", "swim in the lake", "help her mom"})
        out.push_back({prefix + end, 0});
    return out;
}

}  // namespace kvs
