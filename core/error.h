#pragma once
// One error type for everything a user can cause (bad file, bad prompt, bad option). Its message
// is a single line that names the culprit, so every front end can print it as-is and exit 2.
#include <stdexcept>
#include <string>

namespace kvs {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace kvs
