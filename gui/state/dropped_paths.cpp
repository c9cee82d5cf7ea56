#include "gui/state/dropped_paths.h"

#include <filesystem>

namespace kvs::gui {

std::string model_among_dropped(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec) || fs::path(p).filename().string().rfind("tok", 0) != 0)
            return p;
    }
    return paths.empty() ? std::string() : paths.front();
}

}  // namespace kvs::gui
