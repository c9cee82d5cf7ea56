#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvs {

// Throws kvs::Error when `path` holds a NUL byte: the C library would stop there and open another
// file than the one named (a lesson's @model line, a remembered model path, a shard name).
void check_path_text(const std::string& path);

// Size of the regular file at `path`. Throws kvs::Error naming PATH when it is missing or
// unreadable, a directory, or not a regular file (a device such as /dev/zero, a pipe): those are
// refused before anything is read, so a wrong path never means reading gigabytes.
std::uintmax_t regular_file_size(const std::string& path);

// Whole file as bytes; throws kvs::Error("PATH: ...") when it cannot be read (see above).
// `limit` guards against being handed a huge unrelated file: it is checked before reading.
std::vector<unsigned char> read_file_bytes(const std::string& path, std::size_t limit);

// Error "NAME: N bytes, too short for HEADER (needs at least M)": one message for every format
// whose file is shorter than its fixed header (HEADER names the format: "a GGUF header").
[[noreturn]] void refuse_too_short(const std::string& name, std::uintmax_t size,
                                   const std::string& header, std::size_t needs);

// The first min(n, size) bytes, for readers that check a header before reading the rest.
std::vector<unsigned char> read_file_head(const std::string& path, std::size_t n);

}  // namespace kvs
