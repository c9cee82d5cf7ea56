// The window's exports, into the current folder under names with the time.
#include "gui/actions/export.h"

#include <cstdio>
#include <ctime>
#include <vector>

namespace kvs::gui {

void export_shown(FrameContext& f, ExportWhat what) {
    if (f.snap.steps() == 0 || f.step < 0) return;
    char stamp[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "kvscope-%Y%m%d-%H%M%S", std::localtime(&t));
    const std::string base = stamp;
    const int layer = f.ui.settings.layer, head = f.ui.settings.head;
    std::vector<ExportFile> files;
    auto add = [&](ExportWhat w, ExportFile::Kind k, const std::string& suffix) {
        if (what != w && what != ExportWhat::All) return;
        ExportFile e{k, base + suffix};
        e.step = f.step;
        e.layer = layer;
        e.head = head;
        files.push_back(e);
    };
    char att[96];
    std::snprintf(att, sizeof att, "-attention-L%d-H%d-step%d.csv", layer, head, f.step);
    add(ExportWhat::Attention, ExportFile::Kind::AttentionCsv, att);
    add(ExportWhat::Steps, ExportFile::Kind::StepsCsv, "-steps.csv");
    add(ExportWhat::TraceJson, ExportFile::Kind::TraceJson, ".trace.json");
    add(ExportWhat::TraceEvents, ExportFile::Kind::TraceEvents, ".events.json");
    f.worker.export_run(std::move(files));
}

}  // namespace kvs::gui
