#!/usr/bin/env bash
# Seeds of fuzz_hf (corpus/hf/): tiny random-weight models written by our own tools (kvscope-cli
# make-model, then export --hf), each as config.json, a NUL byte, then model.safetensors: a GQA
# one with tied embeddings in F16 and BF16, and one in F32. Usage:
# tests/fuzz/make_hf_corpus.sh [path/to/kvscope-cli]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${1:-$here/../../build/cli/kvscope-cli}"
out="$here/corpus/hf"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$cli" make-model --out "$tmp/a.bin" --dim 32 --hidden 32 --layers 1 --heads 4 --kv-heads 2 \
    --vocab 259 --seq-len 8 >/dev/null
"$cli" make-model --out "$tmp/b.bin" --dim 8 --hidden 12 --layers 2 --heads 2 --vocab 262 \
    --seq-len 4 >/dev/null
seed() {  # model type name
    "$cli" export --model "$tmp/$1.bin" --hf "$tmp/$1-$2" --type "$2" >/dev/null
    { cat "$tmp/$1-$2/config.json"; printf '\0'; cat "$tmp/$1-$2/model.safetensors"; } >"$out/$3"
}
seed a f16 gqa-f16.hf
seed a bf16 gqa-bf16.hf
seed b f32 small-f32.hf
ls -l "$out"
