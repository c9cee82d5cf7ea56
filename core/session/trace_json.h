#pragma once
// The whole trace of a session as JSON (schema in docs/trace-json.md).
#include <ostream>

namespace kvs {

class Session;
void write_trace_json(std::ostream& os, const Session& s);

}  // namespace kvs
