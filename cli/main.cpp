// kvscope-cli: the engine without a window, for scripts, notebooks and tests.
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "cmdline/foreign_options.h"
#include "core/loaders/model_stores.h"
#include "core/util/closest_name.h"
#include "core/util/error.h"
#include "core/util/utf8.h"
#include "core/util/version.h"

namespace {

void usage(FILE* f) {
    std::fputs(
        "usage: kvscope-cli COMMAND [options]   (kvscope-cli COMMAND --help for more)\n"
        "       kvscope-cli -m MODEL -p TEXT -n N   (as llama-cli: the generate command)\n",
        f);
    for (const auto& c : kvs::cli::commands()) std::fprintf(f, "  %-10s %s\n", c.name, c.help);
}

int run(const kvs::cli::Command& c, int argc, char** argv) {
    if (argc > 2 && !std::strcmp(argv[2], "--version")) {
        std::printf("kvscope-cli %s\n", kvs::kvscope_version());
        return 0;
    }
    try {
        return c.run(argc, argv);
    } catch (const kvs::Error& e) {
        // Messages quote file names and file contents: one line, no escape sequences.
        std::fprintf(stderr, "kvscope-cli: error: %s\n",
                     kvs::escape_for_one_line(e.what()).c_str());
        return 2;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "kvscope-cli: error: out of memory\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kvscope-cli: internal error: %s\n", e.what());
        return 1;
    }
}

const kvs::cli::Command* command_named(const std::string& name) {
    for (const auto& c : kvs::cli::commands())
        if (name == c.name) return &c;
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string first = argv[1];
    if (first == "--help" || first == "-h" || first == "help") {
        usage(stdout);
        return 0;
    }
    if (first == "--version") {
        std::printf("kvscope-cli %s\n", kvs::kvscope_version());
        return 0;
    }
    if (const kvs::cli::Command* c = command_named(first)) return run(*c, argc, argv);
    // No command, as llama-cli is typed (`-m M -p TEXT -n N`), or a model first
    // (`kvscope-cli model.gguf -p TEXT`, `kvscope-cli ORG/NAME -p TEXT`): generate.
    std::error_code ec;
    if (first[0] == '-' || std::filesystem::exists(first, ec) || kvs::names_store_model(first)) {
        std::vector<char*> args(argv, argv + argc);
        static char generate[] = "generate";
        args.insert(args.begin() + 1, generate);
        args.push_back(nullptr);
        return run(*command_named("generate"), argc + 1, args.data());
    }
    // Another program's command (`run`, `chat`) gets kvscope's; a misspelt one the nearest.
    std::string hint = kvs::cmdline::foreign_command_answer(first);
    if (hint.empty()) {
        std::vector<std::string> names;
        for (const auto& c : kvs::cli::commands()) names.emplace_back(c.name);
        const std::string near = kvs::closest_name(first, names);
        hint =
            " (" + (near.empty() ? "see kvscope-cli --help" : "did you mean " + near + "?") + ")";
    } else {
        hint = ": " + hint;
    }
    std::fprintf(stderr, "kvscope-cli: error: unknown command '%s'%s\n",
                 kvs::message_for_one_line(first).c_str(), hint.c_str());
    return 2;
}
