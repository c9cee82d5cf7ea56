#pragma once
// JSON read from files (tokenizer.json, config.json, a safetensors header, a shard index), with
// nothing that recurses without a bound: the text is refused when it nests deeper than
// kMaxJsonDepth (a scan of the bytes before nlohmann parses them), messages quote a bounded
// excerpt of a value instead of dump()ing it, members are looked up in place instead of copied
// (nlohmann's value(key, default) copies the whole sub-tree), and every number goes through
// core/util/checked.h with the file and the field named.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/util/checked.h"

namespace kvs {

// Deeper than any file kvscope reads (a tokenizer.json's pre-tokenizer sequence is 5 levels).
constexpr int kMaxJsonDepth = 64;

// The nesting of `text`'s arrays and objects, brackets inside strings not counted: the first
// byte where it passes `limit`, or npos. Linear, no recursion: run before a recursive parser.
std::size_t json_too_deep_at(std::string_view text, int limit);

// `text` as JSON text: core/util/text_file.h's utf8_text (a UTF-8 byte order mark skipped, a
// UTF-16 or UTF-32 one refused), and no NUL byte anywhere: JSON text holds none (inside a string
// it is written \u0000), and nlohmann's parser takes a NUL for the end of its input, so whatever
// follows one (junk, a second document) would be read as if it were not there.
std::string_view json_text(std::string_view text, const std::string& name);

// The JSON value in `text` (json_text first), or Error naming `name`: "NAME: not valid JSON at byte
// N (line L, column C): WHY; near 'EXCERPT'" (json_syntax_problem), "NAME: JSON nested more than 64
// levels deep (at byte N)" or a key given twice (DuplicateKeyCheck).
nlohmann::json parse_json_input(std::string_view text, const std::string& name);

// What nlohmann's parse or number error `e` in `text` means, on one line and bounded whatever
// the text holds: "not valid JSON at byte N (line L, column C): WHY; near 'EXCERPT'", N counted
// from 0, L and C from 1, EXCERPT at most 40 bytes of the line up to the error, escaped. A number
// beyond a double's range carries no position from nlohmann: "not valid JSON: a number beyond a
// double's range (NUMBER)". Every JSON reader's syntax message (parse_json_input, the trace).
// `skipped`: bytes of `text` before what was parsed (a byte order mark), counted in N.
std::string json_syntax_problem(std::string_view text, const nlohmann::json::exception& e,
                                std::size_t skipped = 0);

// A parser callback for nlohmann::json::parse that refuses a key given twice in one object:
// nlohmann and Python's json keep the last, other readers the first, so which value such a file
// means is not known. Error "NAME: the key "K" is given twice in one object (...)". It keeps the
// keys of each open container while it is read (parse_json_input bounds how many are open).
class DuplicateKeyCheck {
  public:
    explicit DuplicateKeyCheck(std::string name);
    bool operator()(int depth, nlohmann::json::parse_event_t e, nlohmann::json& parsed);

  private:
    std::string name_;
    std::vector<std::unordered_set<std::string>> open_;
};

// At most `max_chars` of the value's JSON text, containers cut at 3 levels ("[[[...]]]") and
// strings at 40 bytes: what a message may quote of a value from a file.
std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars = 80);

// The member `key` of `obj` in place, or nullptr when `obj` is not an object, has no such member,
// or it is null.
const nlohmann::json* json_member(const nlohmann::json& obj, std::string_view key);

// A JSON integer (not a float such as 288.0 or 1e3) that must lie in lo..hi (core/util/checked.h's
// message, quoting the value as the file has it: -1, 1.5e+300, "12", [[...]]).
std::int64_t json_int(const nlohmann::json& v, std::int64_t lo, std::int64_t hi, const FileField& f,
                      std::string_view what = "a size");
// A string, or Error "FILE: FIELD = EXCERPT is not a string".
const std::string& json_string(const nlohmann::json& v, const FileField& f);

}  // namespace kvs
