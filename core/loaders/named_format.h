#pragma once
// What a model or tokenizer file's name says it is, checked against how the file starts: the
// format is judged by content (a GGUF file named .bin is read as GGUF, a llama2.c checkpoint named
// .gguf as a checkpoint), and a file that is neither what its name promises nor what its bytes
// read as is refused naming both, so an empty or foreign x.gguf is never reported as only "not a
// llama2.c checkpoint".
#include <string>

namespace kvs {

// For a file given as a model (not a folder): returns true when its bytes start as GGUF.
// Otherwise throws Error when the file is too short for the format its name says ("x.gguf: 3
// bytes, too short for a GGUF header (needs at least 24)") or its name says a tokenizer or JSON
// file, and returns false: the file is read as a llama2.c checkpoint.
bool model_file_is_gguf(const std::string& path);

// A file that did not read as a llama2.c checkpoint (`why`): when its name said another format,
// throws Error naming both ("x.gguf: named as a GGUF file, but it starts with "PK\x03\x04", not
// "GGUF"; as a llama2.c checkpoint: ..."); otherwise returns (the caller rethrows `why`).
void refuse_misnamed(const std::string& path, const std::string& why);

// For a file given as the tokenizer of a llama2.c checkpoint or of a Hugging Face folder with
// `hf` true: throws Error when its name says a tokenizer format that model cannot take.
void check_tokenizer_name(const std::string& path, bool hf);

}  // namespace kvs
