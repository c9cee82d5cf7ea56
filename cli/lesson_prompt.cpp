#include "cli/lesson_prompt.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

#include "core/util/utf8.h"

namespace kvs::cli {
namespace {

// SIGINT is caught while the reader is asked, so Ctrl+C ends the lesson through its summary;
// outside the prompt (a step playing) it keeps its default action. The handler writes a byte to a
// pipe that the wait watches beside stdin: whichever thread of the process the signal lands on,
// and whenever, the wait sees it.
int g_wake_write = -1;
extern "C" void on_interrupt(int) {
    const char c = 1;
    const ssize_t ignored = write(g_wake_write, &c, 1);
    (void)ignored;
}

class InterruptWhileAsking {
  public:
    InterruptWhileAsking() {
        if (pipe(wake_) != 0) wake_[0] = wake_[1] = -1;
        g_wake_write = wake_[1];
        struct sigaction sa {};
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        if (wake_[1] < 0) return;  // no pipe: Ctrl+C keeps its default action
        sigaction(SIGINT, &sa, &old_action_);
        installed_ = true;
    }
    ~InterruptWhileAsking() {
        if (installed_) sigaction(SIGINT, &old_action_, nullptr);
        g_wake_write = -1;
        for (int fd : wake_)
            if (fd >= 0) close(fd);
    }
    InterruptWhileAsking(const InterruptWhileAsking&) = delete;
    InterruptWhileAsking& operator=(const InterruptWhileAsking&) = delete;
    int wake_fd() const { return wake_[0]; }

  private:
    int wake_[2] = {-1, -1};
    bool installed_ = false;
    struct sigaction old_action_ {};
};

enum class LineEnd { Line, Eof, Interrupted };

// One line from stdin, without its newline. Lines longer than kMaxLine are cut (the rest read and
// dropped), so junk cannot grow memory; a cut line is no answer anyway.
constexpr std::size_t kMaxLine = 256;
LineEnd read_line(const InterruptWhileAsking& guard, std::string& line) {
    line.clear();
    for (;;) {
        pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {guard.wake_fd(), POLLIN, 0}};
        if (poll(fds, guard.wake_fd() >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            return LineEnd::Eof;
        }
        if (fds[1].revents & POLLIN) return LineEnd::Interrupted;
        char c = 0;
        const ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return line.empty() ? LineEnd::Eof : LineEnd::Line;
        if (c == '\n') return LineEnd::Line;
        if (line.size() < kMaxLine) line += c;
    }
}

std::string trimmed(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

bool terminal_can_ask() {
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

AskEnd ask_reader(const AskSpec& a, ReportLang lang, LearnerAnswer& out) {
    // Caught before the prompt is shown: a Ctrl+C the moment it appears ends the lesson too.
    const InterruptWhileAsking guard;
    const Words w{lang};
    const int n = static_cast<int>(a.choices.size());
    std::printf("  %s  %s\n", w("PREDICT", "预测"), escape_for_terminal(a.question).c_str());
    const std::string choices = ask_choices_line(a, lang);
    if (!choices.empty()) std::printf("        %s\n", escape_for_terminal(choices).c_str());
    const std::string keys = n > 0 ? "1-" + std::to_string(n) : w("a number", "一个数");
    for (;;) {
        std::printf(w("  your answer (%s; Enter: none; q: quit): ",
                      "  你的答案（%s；直接回车：不作答；q：退出）："),
                    keys.c_str());
        std::fflush(stdout);
        std::string line;
        const LineEnd end = read_line(guard, line);
        if (end != LineEnd::Line) {
            std::printf("\n");
            return end == LineEnd::Interrupted ? AskEnd::Interrupted : AskEnd::Quit;
        }
        const std::string t = trimmed(line);
        if (t == "q" || t == "Q") return AskEnd::Quit;
        out = {};
        if (t.empty() || learner_answer_from(a, t, out)) return AskEnd::Answered;
        std::printf(w("  '%s' is not an answer: %s, Enter alone for none, or q to quit\n",
                      "  “%s”不是答案：请输入%s，直接回车不作答，q 退出\n"),
                    escape_for_one_line(t.substr(0, 40)).c_str(), ask_answer_hint(a, lang).c_str());
    }
}

}  // namespace kvs::cli
