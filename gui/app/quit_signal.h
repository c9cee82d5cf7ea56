#pragma once
// SIGINT and SIGTERM in the interactive window: the first ends the frame loop the way closing
// the window does, so the window ends through its normal path (the engine stopped between forward
// passes, the settings saved). Copies of that one request are not a second request: GNU timeout
// sends SIGTERM to the window and then again to its process group, microseconds apart, and both
// arrive. Only a repeat after the grace period (a user who presses Ctrl+C again because nothing
// seems to happen) or a third signal ends the process at once, by the signal's default action.

namespace kvs::gui {

// Signals closer together than this after the first are copies of it (ms).
constexpr long long kQuitGraceMs = 2000;

// Whether the nth quit signal (1, 2, ...), arriving ms_since_first after the first, ends the
// process at once instead of being left to the frame loop.
bool quit_at_once(int nth, long long ms_since_first);

// Installs the handler for SIGINT and SIGTERM (async-signal-safe: a counter, a monotonic clock
// read, and for the signal that ends the process its default action re-raised).
void install_quit_handlers();

// Whether a quit signal has arrived: the frame loop's cue to end.
bool quit_requested();

}  // namespace kvs::gui
