// The page's bench URL parameter (web/index.html): `kvscope-cli bench ARGS` run in the browser,
// by the CLI's own code (cli/cmd_bench.cpp), its table printed to the console. It runs inside one
// call, so the page draws no frame while it measures.
#include <emscripten.h>

#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/util/error.h"

// args: the options, separated by spaces, e.g. "--lengths=128,512 --repeats=5".
extern "C" EMSCRIPTEN_KEEPALIVE int kvscope_web_bench(const char* args) {
    std::vector<std::string> words{"kvscope-cli", "bench"};
    std::istringstream in(args ? args : "");
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    int rc = 2;
    try {
        rc = kvs::cli::cmd_bench(static_cast<int>(words.size()), argv.data());
    } catch (const kvs::Error& e) {
        std::fprintf(stderr, "kvscope-cli bench: error: %s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kvscope-cli bench: internal error: %s\n", e.what());
    }
    std::printf("kvscope-web-bench: exit %d\n", rc);
    std::fflush(stdout);
    return rc;
}
