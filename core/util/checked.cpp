#include "core/util/checked.h"

#include <cstddef>
#include <cstdio>
#include <limits>

#include "core/util/error.h"
#include "core/util/format.h"
#include "core/util/host_memory.h"

namespace kvs {

std::string FileField::where() const {
    return std::string(file) + ": " + field;
}

void refuse_number(const FileField& f, std::string_view shown, std::string_view what,
                   std::int64_t lo, std::uint64_t hi) {
    // A value quoted from a file is cut: a message stays a line, whatever the file holds.
    const std::string v =
        shown.size() > 40 ? std::string(shown.substr(0, 40)) + "..." : std::string(shown);
    throw Error(f.where() + " = " + v + " is not " + std::string(what) + " (an integer from " +
                std::to_string(lo) + " to " + std::to_string(hi) + ")");
}

std::int64_t checked_int(std::int64_t v, std::int64_t lo, std::int64_t hi, const FileField& f,
                         std::string_view what) {
    if (v < lo || v > hi) refuse_number(f, std::to_string(v), what, lo, std::uint64_t(hi));
    return v;
}

std::uint64_t checked_uint(std::uint64_t v, std::uint64_t hi, const FileField& f,
                           std::string_view what) {
    if (v > hi) refuse_number(f, std::to_string(v), what, 0, hi);
    return v;
}

float to_float(double v) {
    if (v > double(std::numeric_limits<float>::max()))
        return std::numeric_limits<float>::infinity();
    if (v < -double(std::numeric_limits<float>::max()))
        return -std::numeric_limits<float>::infinity();
    return static_cast<float>(v);
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const FileField& f, std::uint64_t hi) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r) || r > hi)
        throw Error(f.where() + ": " + std::to_string(a) + " + " + std::to_string(b) +
                    " is more than " + std::to_string(hi));
    return r;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const FileField& f, std::uint64_t hi) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r) || r > hi)
        throw Error(f.where() + ": " + std::to_string(a) + " x " + std::to_string(b) +
                    " is more than " + std::to_string(hi));
    return r;
}

void check_allocation(std::uint64_t bytes, const FileField& f) {
    if (bytes > std::uint64_t(PTRDIFF_MAX))
        throw Error(f.where() + ": " + format_bytes(double(bytes)) +
                    " of memory needed, more than this process can address");
    const MemoryBudget b = host_memory_budget();
    if (b.bytes != 0 && bytes > b.bytes)
        throw Error(f.where() + ": " + format_bytes(double(bytes)) + " of memory needed, " +
                    format_bytes(double(b.bytes)) + " available (" + b.source + ")");
}

void check_file_name(std::string_view name, const FileField& f, std::string_view folder) {
    const char* why = nullptr;
    if (name.empty())
        why = "empty";
    else if (name.size() > 255)
        why = "longer than 255 bytes";
    else if (name == "." || name == "..")
        why = "a folder";
    for (std::size_t i = 0; !why && i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c == 0)
            why = "a NUL byte inside";
        else if (c < 0x20 || c == 0x7f)
            why = "a control character inside";
        else if (c == '/' || c == '\\')
            why = "a path, not a name";
    }
    if (why)
        throw Error(f.where() + " '" + std::string(name.substr(0, 80)) +
                    "' is not a file name in " + std::string(folder) + " (" + why + ")");
}

}  // namespace kvs
