#pragma once
// Files between the page's memory file system and the browser (Emscripten only): settings kept
// in localStorage, a file offered as a download. The other direction (a checkpoint or a recorded
// trace the user picks or drops) is web/index.html's, which writes it under /uploads and calls
// kvscope_web_open_model (web_loop.cpp; a trace JSON is replayed).
#include <string>

namespace kvs::web {

// Copies `dir`/settings.txt and `dir`/imgui.ini into localStorage (keys "kvscope/NAME") when
// they changed; index.html puts them back in `dir` before main() on the next visit. A browser
// that refuses storage (private mode, quota) keeps the settings for this visit only.
void persist_settings(const std::string& dir);

// The browser saves the file at `path` (in the page's file system: a PNG, a CSV or a JSON
// export) under its base name, as a download; the file is then removed from memory.
void offer_download(const std::string& path);

}  // namespace kvs::web
