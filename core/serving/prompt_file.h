#pragma once
// The prompts of a serving run: a file's lines, each with the step it arrives at, or the built-in
// set (eight short stories' openings sharing a prefix, as the Serving view and the docs' runs use).
#include <string>
#include <vector>

namespace kvs {

struct PromptLine {
    std::string text;
    int arrival = 0;  // the step at which the request arrives
};

// One prompt a line (a line break inside a prompt cannot be given; a trailing '\r' is dropped);
// blank lines are skipped. "@N text" arrives at step N (0..2^24); any other line at step 0. A
// prompt that begins with '@' is written after an arrival ("@0 @name"). At most 16 MiB. Throws
// kvs::Error naming the file (and the line) when it cannot be read, a line starts with '@' but is
// not an arrival and a prompt, or it holds no prompt.
std::vector<PromptLine> read_prompt_file(const std::string& path);

// Eight prompts that begin with the same 20-odd tokens, all arriving at step 0.
std::vector<PromptLine> builtin_serve_prompts();

}  // namespace kvs
