#!/bin/bash
# Hostile values through the CLI, one case per class: a JSON key given twice (config.json,
# tokenizer.json, a trace), a model-shape refusal that names the file's real format and shows
# its float as written, option values strtol/strtod would read loosely (" 5", 0x10), an output
# named over a user's file (kept), a FIFO nobody reads (refused, no hang), a JSON syntax error
# placed, a file named for a format its bytes are not, a byte order mark in a prompt file, a lesson
# not in UTF-8, a symlink loop. Each case: exit 2,
# one line on stderr, the expected message. Usage: hostile_values.sh KVSCOPE_CLI MODELS_DIR
set -u
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
# expect NAME EXPECTED-MESSAGE-PART ARGS...
expect() {
    local name=$1 want=$2
    shift 2
    timeout 60 "$cli" "$@" >"$dir/out" 2>"$dir/err" </dev/null
    local rc=$? last
    last=$(tail -n 1 "$dir/err")
    if [[ $rc != 2 || $last != "kvscope-cli: error: "*"$want"* ]]; then
        echo "FAIL $name: exit $rc, last line: $last (wanted: $want)"
        fails=$((fails + 1))
    fi
}
"$cli" make-model --out "$dir/m.bin" --shape small >/dev/null 2>&1 || { echo "make-model failed"; exit 1; }
"$cli" export --model "$dir/m.bin" --hf "$dir/hf" >/dev/null 2>&1 || { echo "export failed"; exit 1; }
"$cli" export --model "$dir/m.bin" --gguf "$dir/m.gguf" >/dev/null 2>&1 || { echo "export failed"; exit 1; }

# A key twice: which value the file means is not known.
cp -r "$dir/hf" "$dir/hft" && rm "$dir/hft/tokenizer.bin"
printf '{"model":{"vocab":{"a":0,"a":1}},"pre_tokenizer":{"type":"ByteLevel"}}' >"$dir/hft/tokenizer.json"
expect tokenizer-key-twice 'tokenizer.json: the key "a" is given twice in one object' \
    info --model "$dir/hft"
sed 's/^{/{"hidden_size": 7,/' "$dir/hf/config.json" >"$dir/c" && mv "$dir/c" "$dir/hf/config.json"
expect config-key-twice 'config.json: the key "hidden_size" is given twice in one object' \
    info --model "$dir/hf"
"$cli" generate --model "$dir/m.bin" -n 2 --trace-json "$dir/tr.json" >/dev/null 2>&1
sed 's/^{/{"mode":"cached",/' "$dir/tr.json" >"$dir/tr2.json"
expect trace-key-twice 'tr2.json: the key "mode" is given twice in one object' replay "$dir/tr2.json"

# The shape check names the format the shapes came from, and a float as it is.
python3 - "$dir/m.gguf" "$dir/eps.gguf" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
key = b'llama.attention.layer_norm_rms_epsilon'
at = b.index(key) + len(key) + 4  # the key, its type (u32), then the f32
struct.pack_into('<f', b, at, -1.0)
open(sys.argv[2], 'wb').write(b)
PY
expect gguf-format-named 'eps.gguf: not a usable GGUF file: RMSNorm epsilon -1 (must be above 0' \
    info --model "$dir/eps.gguf"

# Option values: what strtol and strtod skip or read besides decimal digits is refused.
expect option-leading-space "--max-new-tokens: ' 5' is not a whole number" \
    generate --model "$dir/m.bin" -n " 5"
expect option-hex "--temperature: '0x10' is not a number" \
    generate --model "$dir/m.bin" -n 2 --temp 0x10

# An output named over a file of the user's: kept, refused by name.
echo "my notes" >"$dir/notes.txt"
expect output-keeps-user-file 'notes.txt: already holds something else' \
    generate --model "$dir/m.bin" -n 2 --csv "$dir/notes.txt"
[[ $(cat "$dir/notes.txt") == "my notes" ]] || { echo "FAIL notes.txt was replaced"; fails=$((fails + 1)); }
# ... while an earlier output of the same kind is replaced.
"$cli" generate --model "$dir/m.bin" -n 2 --csv "$dir/run.csv" >/dev/null 2>&1 &&
    "$cli" generate --model "$dir/m.bin" -n 3 --csv "$dir/run.csv" >/dev/null 2>&1 ||
    { echo "FAIL a CSV over an earlier CSV was refused"; fails=$((fails + 1)); }

# A FIFO nobody reads: refused after its wait, never a hang (timeout 60 above).
mkfifo "$dir/fifo"
expect output-fifo-no-reader 'fifo: a pipe that nobody reads' \
    generate --model "$dir/m.bin" -n 2 --csv "$dir/fifo"

# A JSON syntax error says where: byte, line and column, and the text up to it.
cp -r "$dir/hf" "$dir/hfs"
printf '{\n  "hidden_size": 64,,\n}\n' >"$dir/hfs/config.json"
expect json-syntax-where \
    "config.json: not valid JSON at byte 22 (line 2, column 21): unexpected ','; expected string literal; near '  \"hidden_size\": 64,,'" \
    info --model "$dir/hfs"
printf '\xff\xfe{\0}\0' >"$dir/t16.json"
expect json-utf16 't16.json: UTF-16 text (it starts with a UTF-16 byte order mark); kvscope reads UTF-8' replay "$dir/t16.json"

# A file judged by its name and first bytes: what it was taken for is named.
printf 'GGU' >"$dir/short.gguf"
expect gguf-too-short 'short.gguf: 3 bytes, too short for a GGUF header (needs at least 24)' \
    info --model "$dir/short.gguf"
expect tokenizer-json-for-llama2c 'tokenizer.json: a Hugging Face tokenizer (.json), which kvscope reads' \
    generate --model "$dir/m.bin" -n 2 --tokenizer "$dir/hft/tokenizer.json"

# Text files: a byte order mark is not part of the prompt; a lesson not in UTF-8 says where.
printf 'the cat\n' >"$dir/p.txt" && printf '\xef\xbb\xbfthe cat\n' >"$dir/pbom.txt"
tokens() { timeout 60 "$cli" generate --model "$dir/m.bin" -n 1 -f "$1" 2>&1 >/dev/null | grep -o '[0-9]* prompt tokens'; }
[[ $(tokens "$dir/pbom.txt") == "$(tokens "$dir/p.txt")" ]] ||
    { echo "FAIL prompt-bom: $(tokens "$dir/pbom.txt") with a BOM, $(tokens "$dir/p.txt") without"; fails=$((fails + 1)); }
printf '# T\n\n## S\n@model toy\ncaf\xe9\n' >"$dir/latin1.md"
expect lesson-not-utf8 'latin1.md:5: not UTF-8 text (byte 0xE9 at byte offset 24)' lesson "$dir/latin1.md"
ln -s loop1 "$dir/loop2" && ln -s loop2 "$dir/loop1"
expect lesson-symlink-loop 'loop1: cannot open: Too many levels of symbolic links' lesson "$dir/loop1"

# A model folder's file that is there but not a readable file: its own reason, never "missing".
cp -r "$dir/hf" "$dir/hfl" && rm "$dir/hfl/model.safetensors"
ln -s loop "$dir/hfl/model.safetensors" && ln -s model.safetensors "$dir/hfl/loop"
expect folder-file-loop 'hfl/model.safetensors: cannot open: Too many levels of symbolic links' \
    info --model "$dir/hfl"
cp -r "$dir/hf" "$dir/hfd" && rm "$dir/hfd/config.json" && mkdir "$dir/hfd/config.json"
expect folder-config-folder 'hfd/config.json: is a folder; give the path of a file in it' \
    info --model "$dir/hfd"

[[ $fails == 0 ]] && echo "hostile values: all cases passed"
exit $((fails != 0))
