#pragma once
// Text a user writes in an editor and gives kvscope as a file: a prompt (-f, serve's --prompts),
// a lesson. One reader for all of them, so that each treats the file's first bytes alike: a UTF-8
// byte order mark (Windows editors start files with one) is not text and is dropped, never
// tokenised as three byte tokens or read as part of a title. settings.txt, which kvscope rewrites
// and so does not read as an input of the run, and JSON go through utf8_text the same way. A
// UTF-16 or UTF-32 byte order mark is refused by name for all of them.
#include <cstddef>
#include <string>
#include <string_view>

namespace kvs {

// `text` without a leading UTF-8 byte order mark (EF BB BF).
std::string_view without_bom(std::string_view text);

// without_bom(text), or Error "NAME: UTF-16 text (it starts with a UTF-16 byte order mark);
// kvscope reads UTF-8: save it as UTF-8" (UTF-32 the same): what an editor's "Unicode" encoding
// writes, said so instead of read as NUL-ridden bytes (prompt tokens, a missing title, a JSON
// syntax error at byte 0).
std::string_view utf8_text(std::string_view text, const std::string& name);

// The file's bytes through utf8_text; read_file_bytes' checks and Errors (a folder, a device, a
// missing file, more than `limit` bytes).
std::string read_text_file(const std::string& path, std::size_t limit);

// The byte offset of the first byte of `text` that is not well-formed UTF-8, or npos.
std::size_t first_bad_utf8(std::string_view text);

}  // namespace kvs
