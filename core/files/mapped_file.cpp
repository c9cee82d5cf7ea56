#include "core/files/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/output_file.h"

namespace kvs {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::size_t limit) {
    regular_file_size(path);  // folder, device, pipe: refused before open() could block on them
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int err = errno;
        ::close(fd);
        throw Error(path + ": cannot open: " + std::strerror(err ? err : EINVAL));
    }
    note_input_file(fd);  // a mapped model is an input too: never to be overwritten by an output
    // The size of the file we hold open, not of whatever the path named a moment ago.
    const auto size = static_cast<std::uintmax_t>(st.st_size);
    if (size > limit) {
        ::close(fd);
        throw Error(path + ": file is larger than " + std::to_string(limit >> 20) +
                    " MiB, too large for kvscope");
    }
    if (size == 0) {  // mmap of 0 bytes is an error; an empty file maps to nothing
        ::close(fd);
        return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
    }
    // MAP_PRIVATE: a file rewritten while we run does not change pages already read by writes
    // through our mapping (there are none: PROT_READ); the mapping outlives the descriptor.
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(err));
    // A forward pass reads every weight in file order: ask for read-ahead.
    ::madvise(p, size, MADV_WILLNEED);
    return std::shared_ptr<const MappedFile>(
        new MappedFile(static_cast<const unsigned char*>(p), static_cast<std::size_t>(size)));
}

void MappedFile::release(const unsigned char* p, std::size_t n) const {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
    const auto hi = (reinterpret_cast<std::uintptr_t>(p) + n) / page * page;
    if (p >= data_ && p + n <= data_ + size_ && hi > lo)
        ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

std::shared_ptr<float[]> zeroed_floats(std::size_t n) {
    const std::size_t bytes = (n ? n : 1) * sizeof(float);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the pages are 4 KiB
#endif
    return std::shared_ptr<float[]>(static_cast<float*>(p),
                                    [bytes](float* q) { ::munmap(q, bytes); });
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace kvs
