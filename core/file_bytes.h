#pragma once
#include <string>
#include <vector>

namespace kvs {

// Whole file as bytes; throws kvs::Error("PATH: cannot open: REASON") when it cannot be read.
// `limit` guards against being handed a huge unrelated file.
std::vector<unsigned char> read_file_bytes(const std::string& path, std::size_t limit);

}  // namespace kvs
