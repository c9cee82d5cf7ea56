#include "core/serving/prompt_file.h"

#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {

std::vector<std::string> read_prompt_file(const std::string& path) {
    const std::vector<unsigned char> bytes = read_file_bytes(path, std::size_t(16) << 20);
    std::vector<std::string> prompts;
    std::string line;
    const auto end_line = [&] {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) prompts.push_back(line);
        line.clear();
    };
    for (unsigned char c : bytes) {
        if (c == '\n')
            end_line();
        else
            line.push_back(static_cast<char>(c));
    }
    end_line();
    if (prompts.empty()) throw Error(path + ": no prompts in the file (one a line)");
    return prompts;
}

std::vector<std::string> builtin_serve_prompts() {
    const std::string prefix =
        "Once upon a time, there was a little girl named Lily. She loved to ";
    return {prefix + "play with her ball", prefix + "draw pictures", prefix + "sing songs",
            prefix + "play in the park",   prefix + "read books",    prefix + "bake cookies",
            prefix + "swim in the lake",   prefix + "help her mom"};
}

}  // namespace kvs
