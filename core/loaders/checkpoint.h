#pragma once
// Reader for llama2.c checkpoints (the legacy "version 0" layout that run.c maps):
// a 7 x int32 header, then float32 tensors in a fixed order. Everything is validated before use.
#include <cstddef>
#include <functional>
#include <string>

#include "core/model/compact_weights.h"
#include "core/model/llama_weights.h"
#include "core/model/model_config.h"

namespace kvs {

// Maps the file read-only and validates it in place: nothing is copied, the weights point into
// the mapping (shared with the page cache; see core/files/mapped_file.h).
// Throws kvs::Error with a one-line message naming `path` on any problem: missing or unreadable
// file, a header that is not a sane model, a size that differs from what the header implies.
// `weights` other than F32: the matrices converted to that type as well
// (core/model/compact_weights.h), and the mapping's pages of those matrices let go once converted.
// `before_read`, when given, sees the mapped and checked checkpoint before any weight is read or
// converted (the loader's context cut and memory check: it may change the config's seq_len, or
// throw).
Checkpoint load_checkpoint(const std::string& path, GgmlType weights = GgmlType::F32,
                           const std::function<void(Checkpoint&)>& before_read = {});

// The same from bytes already in memory (for fuzzing and tests), copied into a float array
// (the bytes need not be aligned); `name` is used in messages.
Checkpoint parse_checkpoint(const unsigned char* data, std::size_t size, const std::string& name);

}  // namespace kvs
