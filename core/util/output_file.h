#pragma once
// Every file kvscope writes for the user (trace JSON, bench CSV, screenshots, layout JSON, the
// window's settings) goes through here, so that none of the user's files is ever overwritten by
// mistake or left half-written:
// - a target that is an input of this run (the open model, tokenizer or lesson: same st_dev and
//   st_ino, so another name or a link to it counts too) is refused;
// - a regular file (or a new one) is written to a temporary file beside it, flushed with fsync,
//   closed with its error checked, then renamed over the target: a run killed half-way (SIGPIPE
//   from `| head`, Ctrl+C) leaves the old file as it was, and two runs writing the same target
//   each leave a whole file (the last rename wins);
// - an existing regular file is replaced only when it is empty or its kind (OutputKind) knows
//   it for kvscope's own earlier output of that kind by the whole header that output starts with
//   (a trace JSON's first key, a CSV's header line, a PNG's kvscope text chunk, a GGUF's kvscope
//   description): anything else is the user's, kept, and the write refused by name; a file
//   marked read-only is kept too (a rename beside it would not ask its permission);
// - each of these refusals is made before the work that makes the output
//   (check_output_path with the output's kind), not only when it is written;
// - an existing target that is not a regular file (/dev/stdout, a pipe, /dev/full) is written in
//   place, never replaced, with every write, fsync and close checked: /dev/full is an error. A
//   FIFO that no process reads is waited on for 10 s, then refused (nothing written).
// Errors are kvs::Error naming the path.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kvs {

// Records the file open on `fd` as an input of this run (the readers in file_bytes call it).
void note_input_file(int fd);

// Throws when `path` cannot be an output: a folder, a folder that does not exist, an input of
// this run. Called before long work so a bad path fails at once.
void check_output_path(const std::string& path);
struct OutputKind;
// The same, and every refusal the write of an output of `kind` would make over an existing
// file: one marked read-only, or one that is not kvscope's own earlier output of that kind.
// Every output is checked with it before the work that makes it (a long run, the window's
// session, the first of two files written together).
void check_output_path(const std::string& path, const OutputKind& kind);

// What a write did: the bytes handed over (every write checked), and whether the target is a
// regular file (whose size can then be read back) or a device or pipe (where what becomes of the
// bytes after the write is not known here).
struct Written {
    std::uint64_t bytes = 0;
    bool regular = true;
};

// Throws "PATH: needs 3.00 TiB, the file system there has 79.0 GiB free" when an output of
// `bytes` cannot fit where `path` goes: an output that would run until the disk is full (and
// leave a temporary file of that size behind if killed) is refused before it starts.
void check_output_space(const std::string& path, std::uint64_t bytes, const OutputKind& kind);

// What an output is, and how an existing file is known for kvscope's own earlier output of that
// kind: `own` judges the file's first bytes (at most kOwnHeadBytes) by the whole header every
// such output starts with, never by a few bytes any file of that format has (a user's PNG or
// GGUF is not a screenshot or an export). A kind without `own` replaces empty files only (the
// llama2.c checkpoint has no header of kvscope's to know it by); `anything`: a file that is
// kvscope's own whatever it holds (the window's settings.txt).
struct OutputKind {
    std::string what;  // "trace JSON", named when a file is kept
    std::function<bool(std::string_view head)> own;
    bool anything = false;
};
constexpr std::size_t kOwnHeadBytes = 4096;

// An output without a header of kvscope's to know it by (a llama2.c checkpoint or tokenizer):
// it replaces empty files only.
OutputKind unmarked_output(std::string what);
// Outputs that start with `header`, byte for byte (a CSV's header line, newline included).
OutputKind output_starting(std::string what, std::string header);
// A JSON object whose first key is `key` (any whitespace around the brace, key and colon).
OutputKind json_output_keyed(std::string what, std::string key);

// Writes `bytes` to `path` as described above (check_output_path first).
Written write_output_file(const std::string& path, std::string_view bytes,
                          const OutputKind& kind = {});

// The same for an output too large to hold in memory (make-model's checkpoint): `fill` is called
// once and hands its bytes, in order and in pieces of any size, to `put`.
using OutputSink = std::function<void(std::string_view)>;
Written write_output_file(const std::string& path,
                          const std::function<void(const OutputSink&)>& fill,
                          const OutputKind& kind = {});

// Whether `path` is this process's standard output (the same file as descriptor 1, e.g.
// /dev/stdout or /proc/self/fd/1): a summary printed there would land inside the output.
bool is_standard_output(const std::string& path);

}  // namespace kvs
