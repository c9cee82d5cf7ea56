#include "core/util/install_paths.h"

#include <cstdlib>
#include <system_error>

#ifndef KVSCOPE_SOURCE_DIR
#define KVSCOPE_SOURCE_DIR "."
#endif

namespace kvs {
namespace fs = std::filesystem;

std::vector<fs::path> data_folder_candidates(const char* env_var, const std::string& folder) {
    std::vector<fs::path> c;
    if (const char* env = std::getenv(env_var); env && *env) c.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path dir = exe.parent_path();
        c.push_back(dir / folder);
        c.push_back(dir / ".." / folder);
        c.push_back(dir / "../share/kvscope" / folder);
    }
    c.push_back(fs::path(KVSCOPE_SOURCE_DIR) / folder);
    return c;
}

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

}  // namespace kvs
