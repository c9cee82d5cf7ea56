#include "core/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace kvs {

std::vector<unsigned char> read_file_bytes(const std::string& path, std::size_t limit) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
    std::vector<unsigned char> bytes;
    unsigned char chunk[1 << 16];
    std::size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0) {
        if (bytes.size() + n > limit)
            throw Error(path + ": file is larger than " + std::to_string(limit >> 20) +
                        " MiB, too large for kvscope");
        bytes.insert(bytes.end(), chunk, chunk + n);
    }
    if (std::ferror(f.get())) throw Error(path + ": read error: " + std::strerror(errno));
    return bytes;
}

}  // namespace kvs
