#include "web/web_files.h"

#include <emscripten.h>

// EM_ASM names its arguments $0, $1: not an identifier of ours.
#pragma clang diagnostic ignored "-Wdollar-in-identifier-extension"

namespace kvs::web {

void persist_settings(const std::string& dir) {
    // clang-format off
    EM_ASM({
        const dir = UTF8ToString($0);
        for (const name of ["settings.txt", "imgui.ini"]) {
            let text;
            try {
                // New files come out of core/output_file with mode 0 in the page (seen with
                // Emscripten 3.1.6; its umask() is the likely cause): readable again first.
                FS.chmod(dir + "/" + name, 420);  // 0644
                text = FS.readFile(dir + "/" + name, {encoding: "utf8"});
            } catch (e) { continue; }
            try {
                if (localStorage.getItem("kvscope/" + name) !== text)
                    localStorage.setItem("kvscope/" + name, text);
            } catch (e) {}
        }
    }, dir.c_str());
    // clang-format on
}

void offer_download(const std::string& path) {
    // clang-format off
    EM_ASM({
        const path = UTF8ToString($0);
        FS.chmod(path, 420);  // 0644: see above (stb's fopen gives mode 0 as well)
        const type = path.endsWith(".png") ? "image/png"
                   : path.endsWith(".csv") ? "text/csv" : "application/json";
        const blob = new Blob([FS.readFile(path)], {type: type});
        FS.unlink(path);
        const a = document.createElement("a");
        a.href = URL.createObjectURL(blob);
        a.download = path.substring(path.lastIndexOf("/") + 1);
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    }, path.c_str());
    // clang-format on
}

}  // namespace kvs::web
