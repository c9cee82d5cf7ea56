#pragma once
// How far a long command has got, on stderr: nothing for its first second (or `every_s`, if
// shorter), then a line rewritten in place on a terminal (at most 4 times a second), else a new
// line every `every_s` seconds. clear() before the command's own output to stderr, so the two
// never mix.
#include <chrono>
#include <cstdio>
#include <string>

namespace kvs::cli {

class ProgressLine {
  public:
    // `every_s` 0: a line at every show() (a pipe) or as often as a terminal takes them.
    explicit ProgressLine(std::string command, double every_s = 5.0);
    ProgressLine(std::string command, double every_s, std::FILE* to, bool tty);

    // "kvscope-cli COMMAND: TEXT; N s so far", when one is due.
    void show(const std::string& text);
    void clear();

  private:
    using Clock = std::chrono::steady_clock;
    std::string command_;
    double every_s_;
    std::FILE* to_;
    bool tty_;
    bool shown_ = false;
    Clock::time_point start_ = Clock::now(), last_ = start_;
};

}  // namespace kvs::cli
