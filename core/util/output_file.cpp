#include "core/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>
#include <vector>

#include "core/util/error.h"
#include "core/util/file_bytes.h"
#include "core/util/format.h"

namespace kvs {
namespace {

namespace fs = std::filesystem;

struct Inputs {
    std::mutex mu;
    std::vector<std::pair<dev_t, ino_t>> ids;  // (st_dev, st_ino) of every file read
};
Inputs& inputs() {
    static Inputs in;
    return in;
}

bool is_input(const struct stat& st) {
    Inputs& in = inputs();
    std::lock_guard<std::mutex> lock(in.mu);
    return std::find(in.ids.begin(), in.ids.end(), std::make_pair(st.st_dev, st.st_ino)) !=
           in.ids.end();
}

Error fail(const std::string& path, const std::string& what, int err) {
    return Error(path + ": " + what + ": " + std::strerror(err));
}

// Every byte, retrying short writes and EINTR.
void write_all(int fd, std::string_view bytes, const std::string& path) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw fail(path, "write failed", n < 0 ? errno : EIO);
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

// fsync, then close, both checked: a full disk or a network file system may report a failed
// write only there. EINVAL from fsync is a pipe or terminal, which has nothing to sync.
void sync_and_close(int fd, const std::string& path) {
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        const int e = errno;
        ::close(fd);
        throw fail(path, "write failed", e);
    }
    if (::close(fd) != 0) throw fail(path, "write failed", errno);
}

// A FIFO opened for writing blocks until some process opens it for reading: with nobody to read,
// a run would wait for ever after its work. Open without blocking, retrying while no reader has
// come (ENXIO), for at most kPipeReaderWait; then blocking writes as usual.
constexpr int kPipeReaderWaitMs = 10000;

int open_pipe_end(const std::string& path) {
    for (int waited = 0;; waited += 50) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            return fd;
        }
        if (errno != ENXIO) throw fail(path, "cannot write", errno);
        if (waited >= kPipeReaderWaitMs)
            throw Error(path + ": a pipe that nobody reads (waited " +
                        std::to_string(kPipeReaderWaitMs / 1000) +
                        " s for a reader); nothing written");
        ::usleep(50 * 1000);
    }
}

// Whether the regular file at `path` may be replaced by an output of `kind`: it is empty, or
// the kind knows its first bytes for kvscope's own. Anything else is the user's, and a typo in an
// output's name must not cost it.
bool replaceable(const std::string& path, const OutputKind& kind) {
    if (kind.anything) return true;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT;  // gone since: nothing to lose
    std::string head(kOwnHeadBytes, '\0');
    std::size_t got = 0;
    while (got < head.size()) {
        const ssize_t n = ::read(fd, head.data() + got, head.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += std::size_t(n);
    }
    ::close(fd);
    head.resize(got);
    if (head.empty()) return true;
    return kind.own && kind.own(head);
}

// The refusals an existing regular file earns, before any work and again just before the rename:
// a file marked read-only (no write permission for this process, or none for anyone: root may
// write anything) is the user's way of saying keep it, which a rename beside it would not ask;
// and a file that is not kvscope's own earlier output of `kind` is the user's.
void refuse_to_replace(const std::string& path, const OutputKind& kind) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(path.c_str(), W_OK) != 0)
        throw Error(path + ": is read-only; not replaced: make it writable or give another name");
    if (!replaceable(path, kind))
        throw Error(path + ": already holds something else (" +
                    (kind.own
                         ? "not an earlier " + kind.what + " of kvscope's"
                         : "kvscope replaces no file with a " + kind.what + " unless it is empty") +
                    "); not replaced: remove it first or give another name");
}

}  // namespace

void note_input_file(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return;
    Inputs& in = inputs();
    std::lock_guard<std::mutex> lock(in.mu);
    const auto id = std::make_pair(st.st_dev, st.st_ino);
    if (std::find(in.ids.begin(), in.ids.end(), id) == in.ids.end()) in.ids.push_back(id);
}

void check_output_path(const std::string& path) {
    if (path.empty()) throw Error("no file name given to write to");
    check_path_text(path);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            throw Error(path + ": is a folder; give the name of a file to write");
        if (is_input(st))
            throw Error(path +
                        ": is an input of this run (the model, tokenizer or lesson); "
                        "refusing to overwrite it");
        return;
    }
    if (errno != ENOENT) throw fail(path, "cannot write", errno);
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec)) throw fail(path, "cannot write", ENOENT);
}

void check_output_path(const std::string& path, const OutputKind& kind) {
    check_output_path(path);
    refuse_to_replace(path, kind);
}

Written write_output_file(const std::string& path, std::string_view bytes, const OutputKind& kind) {
    return write_output_file(
        path, [bytes](const OutputSink& put) { put(bytes); }, kind);
}

OutputKind unmarked_output(std::string what) {
    return {std::move(what), nullptr, false};
}

OutputKind output_starting(std::string what, std::string header) {
    return {std::move(what),
            [h = std::move(header)](std::string_view head) { return head.starts_with(h); }};
}

OutputKind json_output_keyed(std::string what, std::string key) {
    std::string quoted(1, '"');
    quoted.append(key).push_back('"');
    return {std::move(what), [k = std::move(quoted)](std::string_view head) {
                const auto skip = [&](std::size_t i) {
                    while (i < head.size() && (head[i] == ' ' || head[i] == '\n' ||
                                               head[i] == '\r' || head[i] == '\t'))
                        ++i;
                    return i;
                };
                std::size_t i = skip(0);
                if (i >= head.size() || head[i] != '{') return false;
                i = skip(i + 1);
                if (head.substr(i, k.size()) != k) return false;
                i = skip(i + k.size());
                return i < head.size() && head[i] == ':';
            }};
}

void check_output_space(const std::string& path, std::uint64_t bytes, const OutputKind& kind) {
    check_output_path(path, kind);
    const fs::path parent = fs::path(path).parent_path();
    struct statvfs vfs {};
    if (::statvfs(parent.empty() ? "." : parent.c_str(), &vfs) != 0) return;  // not known: try
    const std::uint64_t free = std::uint64_t(vfs.f_bavail) * vfs.f_frsize;
    if (bytes > free)
        throw Error(path + ": needs " + format_bytes(double(bytes)) +
                    ", the file system there has " + format_bytes(double(free)) + " free");
}

bool is_standard_output(const std::string& path) {
    struct stat out {
    }, st{};
    return ::fstat(1, &out) == 0 && ::stat(path.c_str(), &st) == 0 && out.st_dev == st.st_dev &&
           out.st_ino == st.st_ino;
}

Written write_output_file(const std::string& path,
                          const std::function<void(const OutputSink&)>& fill,
                          const OutputKind& kind) {
    check_output_path(path, kind);
    Written w;
    struct stat st {};
    const bool existed = ::stat(path.c_str(), &st) == 0;
    if (existed && !S_ISREG(st.st_mode)) {
        // A device or a pipe: it cannot be replaced, only written.
        w.regular = false;
        const int fd =
            S_ISFIFO(st.st_mode) ? open_pipe_end(path) : ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw fail(path, "cannot write", errno);
        try {
            fill([fd, &path, &w](std::string_view b) {
                write_all(fd, b, path);
                w.bytes += b.size();
            });
        } catch (...) {
            ::close(fd);
            throw;
        }
        sync_and_close(fd, path);
        return w;
    }
    // The temporary file is beside the target: rename() is atomic only within one file system.
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string name = ".";
    name += target.filename().string();
    name += ".kvscope-XXXXXX";
    std::string tmp = (dir / name).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) throw fail(path, "cannot write (temporary file beside it)", errno);
    try {
        // mkstemp makes 0600; a new output gets the usual 0666 less the umask, an existing one
        // keeps its mode.
        mode_t mode = st.st_mode & 07777;
        if (::stat(path.c_str(), &st) != 0) {
            const mode_t mask = ::umask(0);
            ::umask(mask);
            mode = 0666 & ~mask;
        }
        ::fchmod(fd, mode);
        fill([fd, &path, &w](std::string_view b) {
            write_all(fd, b, path);
            w.bytes += b.size();
        });
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    try {
        sync_and_close(fd, path);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    // Again: the file may have changed while the output was written.
    try {
        refuse_to_replace(path, kind);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw fail(path, "cannot write", e);
    }
    return w;
}

}  // namespace kvs
