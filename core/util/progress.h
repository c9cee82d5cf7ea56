#pragma once
// How long work tells its caller how far it is: bytes done of a total (0: not known). The engine
// only calls it; what a user sees of it (a line on a terminal) is the program's
// (cli/progress_line.h).
#include <cstdint>
#include <functional>

namespace kvs {

using ByteProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

}  // namespace kvs
