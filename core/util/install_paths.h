#pragma once
// Where kvscope's data folders (assets/, lessons/) may be: named by an environment variable,
// beside the executable, one folder up (a build tree), in ../share/kvscope (an install), or in
// the source tree it was built from. Models and lessons are looked up in the same places.
#include <filesystem>
#include <string>
#include <vector>

namespace kvs {

// The candidates for data folder `folder` ("assets", "lessons"), most specific first; the
// value of `env_var` comes first when it is set.
std::vector<std::filesystem::path> data_folder_candidates(const char* env_var,
                                                          const std::string& folder);

// A regular file (following links), without throwing.
bool is_file(const std::filesystem::path& p);

}  // namespace kvs
