#pragma once
// Hostile model folders for the reliability tests, through the CLI (test_hostile_input.cpp) and
// the window's --open (test_gui_app.cpp): each is a copy of one good Hugging Face folder (the tiny
// synthetic model, exported) with one thing wrong, small enough to write in milliseconds.
#include <filesystem>
#include <map>
#include <string>

namespace kvs::test {

// A good Hugging Face folder of the tiny model (export --hf), made once per test process.
const std::filesystem::path& good_hf_folder();

// A copy of good_hf_folder() in `dir`/`name` whose files named in `files` have the given text
// (an empty text removes that file). Returns the folder.
std::filesystem::path hf_folder_with(const std::filesystem::path& dir, const std::string& name,
                                     const std::map<std::string, std::string>& files);

// The good config.json with `key` set to `raw` (JSON text, written as given: deep nesting too).
std::string config_with(const std::string& key, const std::string& raw);

// `levels` nested arrays: "[[[...]]]".
std::string nested_json(int levels);

// A 100-byte tokenizer.json: four byte-level tokens and one added token whose id is `id` (JSON
// text as given: -1, 18446744073709551615, 1e300, ...).
std::string tokenizer_json_with_added_id(const std::string& id);

// A model.safetensors.index.json naming `shard` (JSON string contents, escapes as given).
std::string index_naming(const std::string& shard);

}  // namespace kvs::test
