#pragma once
// Numbers read from files (sizes, counts, ids, offsets, dimensions) on their way to an index, an
// allocation or a comparison. Every reader converts them here, with a range check, and combines
// them here, with overflow-checked arithmetic, before anything else sees them; a refusal is one
// kvs::Error that names the file, the field and the value as the file has it:
//   "tokenizer.json: added_tokens[0].id = -1 is not a token id (an integer from 0 to 4)"
// Nothing here casts before checking: a negative id, 2^64 - 1, 1e300 or NaN never becomes a
// size_t that wraps or an int that overflows.
#include <cstdint>
#include <string>
#include <string_view>

namespace kvs {

// Where a number came from: the file (its path or name, as messages give it) and the field.
struct FileField {
    std::string file;
    std::string field;
    std::string where() const;  // "FILE: FIELD"
};

// An integer `v` checked to lie in lo..hi. `what` says what it must be ("a size", "a token id");
// the message gives the range: "FILE: FIELD = V is not WHAT (an integer from LO to HI)".
std::int64_t checked_int(std::int64_t v, std::int64_t lo, std::int64_t hi, const FileField& f,
                         std::string_view what = "a size");
std::uint64_t checked_uint(std::uint64_t v, std::uint64_t hi, const FileField& f,
                           std::string_view what = "a size");
// The refusal the checks above throw, for a value whose text the caller has (a JSON number as
// written, a string where a number belongs): "FILE: FIELD = SHOWN is not WHAT (an integer from
// LO to HI)".
[[noreturn]] void refuse_number(const FileField& f, std::string_view shown, std::string_view what,
                                std::int64_t lo, std::uint64_t hi);

// A double from a file (a JSON or GGUF F64 hyper-parameter) as a float without undefined
// behaviour: beyond float's range it is +-inf (NaN stays NaN), which the range checks then refuse.
float to_float(double v);

// a + b and a * b, exactly, or Error "FILE: FIELD: A x B is more than HI" (HI: 2^64 - 1 unless
// given). For products of sizes and counts before they are compared or allocated.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const FileField& f,
                          std::uint64_t hi = UINT64_MAX);
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const FileField& f,
                          std::uint64_t hi = UINT64_MAX);

// An allocation of `bytes` that numbers in a file ask for, checked before it is made: it must be
// addressable in this process and fit the host memory budget (MemAvailable, or
// KVSCOPE_MEM_AVAILABLE; core/util/host_memory.h). Callers first bound the numbers by what the file
// itself holds (an id below the count of entries, a count below the bytes left), so a small
// file never asks for much; this is the last word on the big ones.
//   "FILE: FIELD: 8.00 GiB of memory needed, 3.10 GiB available (MemAvailable in /proc/meminfo)"
void check_allocation(std::uint64_t bytes, const FileField& f);

// A name read from a file that is used as a file name in a folder (a shard of a safetensors
// index): no NUL, no control characters, no '/' or '\\', not "." or "..", not empty, at most 255
// bytes. Else Error "FILE: FIELD 'NAME' is not a file name in FOLDER (WHY)".
void check_file_name(std::string_view name, const FileField& f, std::string_view folder);

}  // namespace kvs
