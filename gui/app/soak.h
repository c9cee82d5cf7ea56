#pragma once
// The long-session check of the window's memory: a scripted session that decodes to the end of
// the context, resets with a new prompt and goes on, drawing a frame after every step, and
// prints the process's resident memory (VmRSS) as it goes. Once every cache, texture and trace
// has reached its largest size, RSS should stay flat however long the session runs.
namespace kvs::gui {

class App;
class EngineWorker;

// Runs `steps` decode steps (prefills not counted), printing VmRSS every `report` steps and a
// summary; returns the exit code. User errors (a prompt the model refuses) are kvs::Error.
int run_soak(App& app, EngineWorker& worker, int steps, int report);

// This process's resident set size in bytes (Linux /proc/self/status), 0 when unknown.
double resident_bytes();

}  // namespace kvs::gui
