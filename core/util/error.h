#pragma once
// One error type for everything a user can cause (bad file, bad prompt, bad option). Its message
// is a single line that names the culprit, so every front end can print it as-is and exit 2.
// User text inside it (a prompt, a file name) is escaped on the way in, so that stays true, and a
// message quoting a huge value is cut in the middle to a bounded length (message_for_one_line).
#include <stdexcept>
#include <string>

#include "core/util/utf8.h"

namespace kvs {

class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& what) : std::runtime_error(message_for_one_line(what)) {}
};

}  // namespace kvs
