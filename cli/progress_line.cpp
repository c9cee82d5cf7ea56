#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/util/format.h"

namespace kvs::cli {
namespace {

// KVSCOPE_PROGRESS_AFTER=S: the seconds before the first line (a test sets 0); else `fallback`.
double after_from_environment(double fallback) {
    const char* v = std::getenv("KVSCOPE_PROGRESS_AFTER");
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    return *end == '\0' && s >= 0 && s < 1e6 ? s : fallback;
}

}  // namespace

ProgressLine::ProgressLine(std::string label, Options o)
    : label_(std::move(label)), options_(o), terminal_(isatty(2) == 1) {
    options_.after_s = after_from_environment(options_.after_s);
}

double ProgressLine::seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
}

bool ProgressLine::due() const {
    if (!terminal_ && options_.piped_every_s <= 0) return false;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - start_).count() < options_.after_s) return false;
    const double since = std::chrono::duration<double>(now - last_).count();
    return !shown_ || since >= (terminal_ ? 0.25 : options_.piped_every_s);
}

void ProgressLine::show(const std::string& text) {
    if (!due()) return;
    last_ = Clock::now();
    char so_far[48];
    std::snprintf(so_far, sizeof so_far, "; %.0f s so far", seconds());
    const std::string line = label_ + ": " + text + so_far;
    if (terminal_) {
        // Padded to the last line's width, so a shorter line leaves nothing of it behind.
        std::fprintf(stderr, "\r%-*s", static_cast<int>(width_), line.c_str());
        width_ = std::max(width_, line.size());
    } else {
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
    shown_ = true;
}

void ProgressLine::clear() {
    if (terminal_ && shown_) {
        std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
        std::fflush(stderr);
    }
    shown_ = false;
    width_ = 0;
}

std::string bytes_of(std::uint64_t done, std::uint64_t total) {
    const std::string d = format_bytes(double(done));
    return total > 0 ? d + " of " + format_bytes(double(total)) : d;
}

}  // namespace kvs::cli
