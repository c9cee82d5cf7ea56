#!/usr/bin/env bash
# Seeds of fuzz_gguf (corpus/gguf/): tiny random-weight models written by our own tools
# (kvscope-cli make-model, then export in each type), a GQA one with a separate classifier, a
# GPT-2 one (make_gpt2_folder.py, exported), and a few cut or patched copies. Usage:
# tests/fuzz/make_gguf_corpus.sh [path/to/kvscope-cli]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${1:-$here/../../build/cli/kvscope-cli}"
out="$here/corpus/gguf"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$cli" make-model --out "$tmp/a.bin" --dim 32 --hidden 32 --layers 1 --heads 2 --kv-heads 1 \
    --vocab 259 --seq-len 8 >/dev/null
"$cli" make-model --out "$tmp/b.bin" --dim 8 --hidden 12 --layers 2 --heads 2 --vocab 262 \
    --seq-len 4 >/dev/null
for t in f16 q8_0 q4_0; do  # f32 and bf16 seeds would be over the 40 kB max_len
    "$cli" export --model "$tmp/a.bin" --gguf "$out/gqa-$t.gguf" --type "$t" >/dev/null
done
"$cli" export --model "$tmp/b.bin" --gguf "$out/small-q8_0-f16-fallback.gguf" --type q8_0 >/dev/null
# GPT-2 (architecture gpt2, fused attn_qkv): a tiny GPT2LMHeadModel folder with the small
# model's tokenizer, exported (rows of 8: F16 matrices).
python3 "$here/make_gpt2_folder.py" "$tmp/gpt2" 262
cp "$tmp/b.tok.bin" "$tmp/gpt2/tokenizer.bin"
"$cli" export --model "$tmp/gpt2" --gguf "$out/gpt2-f16.gguf" --type f16 >/dev/null
head -c 3000 "$out/gqa-q8_0.gguf" >"$out/cut-in-metadata.gguf"
python3 - "$out" <<'PY'
import struct, sys
d = sys.argv[1]
b = bytearray(open(f"{d}/gqa-q4_0.gguf", "rb").read())
b[4:8] = struct.pack("<I", 2)  # the same file as version 2
open(f"{d}/version2.gguf", "wb").write(b)
PY
# The hostile-input classes next to the valid seeds (numbers at their edges, depth, NUL, bidi).
python3 "$here/make_hostile_seeds.py"
ls -l "$out"
