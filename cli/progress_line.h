#pragma once
// What a long command is doing, on stderr: one facility for every command that can run longer
// than a moment (bench's measurements, serve's requests, a trace written or read). Nothing until
// the work has run `after_s` seconds (2 by default; KVSCOPE_PROGRESS_AFTER=S sets it, 0 for the
// tests); then, on a terminal, one line rewritten in place at most 4 times a second and cleared
// when the work is done, so the command's own output is never mixed with it. When stderr is not
// a terminal (a pipe, a log file) it says nothing, unless `piped_every_s` asks for a line every
// so many seconds (bench's, whose runs take minutes in CI logs).
#include <chrono>
#include <cstdint>
#include <string>

namespace kvs::cli {

class ProgressLine {
  public:
    struct Options {
        double after_s = 2.0;
        double piped_every_s = 0;  // 0: quiet when not on a terminal
    };
    explicit ProgressLine(std::string label, Options o);
    explicit ProgressLine(std::string label) : ProgressLine(std::move(label), Options{}) {}
    ~ProgressLine() { clear(); }
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // Whether a line would be shown now: callers build the text only then.
    bool due() const;
    // Shows "LABEL: TEXT; N s so far" when due().
    void show(const std::string& text);
    // Removes the line (a terminal's), before the command prints its results.
    void clear();
    double seconds() const;

  private:
    using Clock = std::chrono::steady_clock;
    std::string label_;
    Options options_;
    Clock::time_point start_ = Clock::now(), last_ = start_;
    bool terminal_;
    bool shown_ = false;
    std::size_t width_ = 0;  // of the line on the terminal, to clear it
};

// "12.3 MB of 157 MB" (or "12.3 MB" when the total is not known): a progress in bytes.
std::string bytes_of(std::uint64_t done, std::uint64_t total);

}  // namespace kvs::cli
