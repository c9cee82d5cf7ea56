#include "gui/app/quit_signal.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <csignal>

namespace kvs::gui {
namespace {

// Written by the handler only (both signals are blocked while it runs, so one runs at a time);
// read by the frame loop. Lock-free, hence usable in a handler; times in ms since the handlers
// were installed (an int holds 24 days of them).
std::atomic<int> g_signals{0};
std::atomic<int> g_first_ms{0};
static_assert(std::atomic<int>::is_always_lock_free);
long long g_installed_ms = 0;  // set before the handlers exist, only read by them

long long monotonic_ms() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe (POSIX)
    return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

void on_quit_signal(int sig) {
    const int now = static_cast<int>(monotonic_ms() - g_installed_ms);
    const int nth = g_signals.load(std::memory_order_relaxed) + 1;
    if (nth == 1) g_first_ms.store(now, std::memory_order_relaxed);
    g_signals.store(nth, std::memory_order_release);
    if (!quit_at_once(nth, now - g_first_ms.load(std::memory_order_relaxed))) return;
    // The default action (terminate, exit status 128 + sig): this signal is blocked until the
    // handler returns, so the raised copy is delivered then, with the default in place.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
}

}  // namespace

bool quit_at_once(int nth, long long ms_since_first) {
    return nth >= 3 || (nth == 2 && ms_since_first >= kQuitGraceMs);
}

void install_quit_handlers() {
    g_installed_ms = monotonic_ms();
    struct sigaction sa {};
    sa.sa_handler = on_quit_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time: the counter is not shared
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

bool quit_requested() {
    return g_signals.load(std::memory_order_acquire) > 0;
}

}  // namespace kvs::gui
