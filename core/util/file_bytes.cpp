#include "core/util/file_bytes.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/util/error.h"
#include "core/util/output_file.h"

namespace kvs {
namespace {

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

// Call regular_file_size first: fopen alone would "open" a folder or a device.
File open_file(const std::string& path) {
    File f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
    note_input_file(fileno(f.get()));  // never to be overwritten by this run's outputs
    return f;
}

// Up to `n` bytes into `out`; fewer only at the end of the file.
void read_up_to(FILE* f, const std::string& path, std::size_t n, std::vector<unsigned char>& out) {
    unsigned char chunk[1 << 16];
    while (out.size() < n) {
        const std::size_t want = std::min(sizeof chunk, n - out.size());
        const std::size_t got = std::fread(chunk, 1, want, f);
        out.insert(out.end(), chunk, chunk + got);
        if (got < want) break;
    }
    if (std::ferror(f)) throw Error(path + ": read error: " + std::strerror(errno));
}

}  // namespace

void refuse_too_short(const std::string& name, std::uintmax_t size, const std::string& header,
                      std::size_t needs) {
    throw Error(name + ": " + std::to_string(size) + (size == 1 ? " byte" : " bytes") +
                ", too short for " + header + " (needs at least " + std::to_string(needs) + ")");
}

void check_path_text(const std::string& path) {
    if (path.find('\0') != std::string::npos)
        throw Error(path + ": a NUL byte inside the name; no file can be named so");
}

std::uintmax_t regular_file_size(const std::string& path) {
    namespace fs = std::filesystem;
    check_path_text(path);
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || st.type() == fs::file_type::not_found)
        throw Error(path +
                    ": cannot open: " + (ec ? ec.message() : std::string(std::strerror(ENOENT))));
    if (st.type() == fs::file_type::directory)
        throw Error(path + ": is a folder; give the path of a file in it");
    if (st.type() != fs::file_type::regular)
        throw Error(path + ": not a regular file (a device, pipe or socket); give a file");
    const auto size = fs::file_size(path, ec);
    if (ec) throw Error(path + ": cannot open: " + ec.message());
    return size;
}

std::vector<unsigned char> read_file_bytes(const std::string& path, std::size_t limit) {
    const auto too_large = [&] {
        return Error(path + ": file is larger than " + std::to_string(limit >> 20) +
                     " MiB, too large for kvscope");
    };
    const auto size = regular_file_size(path);
    if (size > limit) throw too_large();
    File f = open_file(path);
    std::vector<unsigned char> bytes;
    bytes.reserve(static_cast<std::size_t>(size));
    // One byte past the limit tells a file that grew since the size check from one that fits.
    read_up_to(f.get(), path, limit + 1, bytes);
    if (bytes.size() > limit) throw too_large();
    return bytes;
}

std::vector<unsigned char> read_file_head(const std::string& path, std::size_t n) {
    regular_file_size(path);
    File f = open_file(path);
    std::vector<unsigned char> bytes;
    read_up_to(f.get(), path, n, bytes);
    return bytes;
}

}  // namespace kvs
