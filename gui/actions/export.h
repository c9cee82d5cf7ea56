#pragma once
// The window's exports (the toolbar's Export menu, Ctrl+E for all four) into the current folder,
// named by the time: the attention matrix of the head and step shown and the per-step table as
// CSV, the run as trace JSON and as Chrome / Perfetto trace events. The engine worker writes them
// (EngineWorker::export_run) from the snapshot, live or replayed.
#include "gui/draw/frame_context.h"

namespace kvs::gui {

enum class ExportWhat { Attention, Steps, TraceJson, TraceEvents, All };
void export_shown(FrameContext& f, ExportWhat what);

}  // namespace kvs::gui
