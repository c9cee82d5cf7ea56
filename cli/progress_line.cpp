#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace kvs::cli {

ProgressLine::ProgressLine(std::string command, double every_s)
    : ProgressLine(std::move(command), every_s, stderr, isatty(2) == 1) {}

ProgressLine::ProgressLine(std::string command, double every_s, std::FILE* to, bool tty)
    : command_(std::move(command)), every_s_(every_s), to_(to), tty_(tty) {}

void ProgressLine::show(const std::string& text) {
    const auto now = Clock::now();
    const double t = std::chrono::duration<double>(now - start_).count();
    if (t < std::min(1.0, every_s_)) return;
    const double gap = tty_ ? std::min(0.25, every_s_) : every_s_;
    if (shown_ && std::chrono::duration<double>(now - last_).count() < gap) return;
    last_ = now;
    char so_far[48];
    std::snprintf(so_far, sizeof so_far, "; %.0f s so far", t);
    const std::string line = "kvscope-cli " + command_ + ": " + text + so_far;
    if (tty_)
        std::fprintf(to_, "\r%-90s", line.c_str());
    else
        std::fprintf(to_, "%s\n", line.c_str());
    std::fflush(to_);
    shown_ = true;
}

void ProgressLine::clear() {
    if (tty_ && shown_) std::fprintf(to_, "\r%90s\r", "");
    shown_ = false;
}

}  // namespace kvs::cli
