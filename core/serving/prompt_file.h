#pragma once
// The prompts of a serving run: a file's lines, or the built-in set (eight short stories'
// openings sharing a prefix, as the Serving view and the docs' runs use).
#include <string>
#include <vector>

namespace kvs {

// One prompt a line (a line break inside a prompt cannot be given; a trailing '\r' is dropped);
// blank lines are skipped. At most 16 MiB. Throws kvs::Error naming the file when it cannot be
// read or holds no prompt.
std::vector<std::string> read_prompt_file(const std::string& path);

// Eight prompts that begin with the same 20-odd tokens.
std::vector<std::string> builtin_serve_prompts();

}  // namespace kvs
