#pragma once
// What a model or tokenizer file's name says it is, checked against how the file starts, before
// any reader parses it: the format is judged by content (a GGUF file named .bin is read as GGUF),
// and a name that promises a format its bytes do not start as is refused naming both, so an
// empty or foreign x.gguf is never reported as "not a llama2.c checkpoint".
#include <string>

namespace kvs {

// For a file given as a model (not a folder): returns true when its bytes start as GGUF.
// Otherwise throws Error when its name says a format that is not a llama2.c checkpoint
// ("x.gguf: 3 bytes, too short for a GGUF header (needs at least 24)", "x.gguf: named as a GGUF
// file, but it starts with ..., not "GGUF"", a tokenizer or JSON file given as the model), and
// returns false: the file is read as a llama2.c checkpoint.
bool model_file_is_gguf(const std::string& path);

// For a file given as the tokenizer of a llama2.c checkpoint or of a Hugging Face folder with
// `hf` true: throws Error when its name says a tokenizer format that model cannot take.
void check_tokenizer_name(const std::string& path, bool hf);

}  // namespace kvs
