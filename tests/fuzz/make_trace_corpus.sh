#!/usr/bin/env bash
# Seeds of fuzz_trace (corpus/trace/): small recorded runs written by our own tools: the toy,
# a tiny random-weight model cached, uncached and in compare mode (kvscope-cli make-model, then
# generate / compare --trace-json), and the cached one as a version 1 trace. Usage:
# tests/fuzz/make_trace_corpus.sh [path/to/kvscope-cli]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${1:-$here/../../build/cli/kvscope-cli}"
out="$here/corpus/trace"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$cli" make-model --out "$tmp/m.bin" --dim 8 --hidden 12 --layers 1 --heads 2 --kv-heads 1 \
    --vocab 259 --context 8 >/dev/null
"$cli" toy -n 2 --trace-json "$out/toy.json" >/dev/null
"$cli" generate -m "$tmp/m.bin" -p "ab" -n 2 --trace-json "$out/cached.json" >/dev/null 2>&1
"$cli" generate -m "$tmp/m.bin" -p "ab" -n 2 --cache off --trace-json "$out/uncached.json" \
    >/dev/null 2>&1
"$cli" compare -m "$tmp/m.bin" -p "a" -n 2 --trace-json "$out/compare.json" >/dev/null
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/cached.json"))
j["kvscope_trace"] = 1
del j["recorded"]
for k in ("architecture", "shared_classifier", "qkv_bias", "n_positions", "format",
          "parameters", "bos"):
    del j["model"][k]
for s in j["steps"]:
    del s["time"]["op_calls"]
json.dump(j, open(f"{d}/version1.json", "w"), separators=(",", ":"))
PY
ls -l "$out"
