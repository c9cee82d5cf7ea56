#!/usr/bin/env bash
# kvscope-cli generate against llama2.c's run.c (fast build) on the two small models, one thread,
# greedy, prompt "Once upon a time", ROUNDS interleaved rounds (the order flips every round).
# kvscope prints two rates: decode (its forward passes and sampling, each step timed once) and
# the whole loop from the first decode step to the last token printed, which is what run.c's
# "achieved tok/s" times (its forward, sampling and printing; whole milliseconds). BASE, when
# set, is another kvscope-cli (an older build) run in the same rounds; it may lack the loop rate.
# Needs RUNC: run.c built as its Makefile's fast target (gcc -Ofast -march=native run.c -lm), in
# a temporary folder, never committed.
# Usage: RUNC=... [BASE=...] docs/bench/small_decode_vs_runc.sh build/cli/kvscope-cli
set -euo pipefail
CLI="$1"
ROUNDS="${ROUNDS:-9}"
S=../shared/models
prompt="Once upon a time"
models=(
    "260K|stories260K|$S/stories260K.bin|$S/tok512.bin"
    "default|default|assets/models/kvscope-tiny.bin|assets/models/kvscope-tiny.tok.bin"
)
kvs() {  # cli model
    "$1" generate --model "$2" --prompt "$prompt" --max-new-tokens 252 --threads 1 \
        --timing-runs 1 2>&1 >/dev/null |
        sed -n 's/.*decode \([0-9.]*\) tok\/s ([a-z]*)\(, \([0-9.]*\) tok\/s with the loop\)\{0,1\}.*/decode_tok_s=\1 loop_tok_s=\3/p'
}
runc() {  # checkpoint tokenizer
    "$RUNC" "$1" -z "$2" -t 0.0 -n 256 -i "$prompt" 2>&1 >/dev/null |
        sed -n 's/achieved tok\/s: \(.*\)/loop_tok_s=\1/p'
}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
echo "# $(date -u '+%F %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for r in $(seq "$ROUNDS"); do
    for spec in "${models[@]}"; do
        IFS='|' read -r name km rc rt <<<"$spec"
        order=(kvs runc base)
        [ $((r % 2)) -eq 0 ] && order=(base runc kvs)
        for who in "${order[@]}"; do
            case $who in
            kvs) echo "round=$r kvs-$name $(kvs "$CLI" "$km")" ;;
            runc) echo "round=$r runc-$name $(runc "$rc" "$rt")" ;;
            base) if [ -n "${BASE:-}" ]; then echo "round=$r base-$name $(kvs "$BASE" "$km")"; fi ;;
            esac
        done
    done
done | tee "$OUT"
# Medians of each rate, and the medians of the within-round ratios to run.c's loop.
python3 - "$OUT" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"round=(\d+) (\S+) (.*)", line)
    if m:
        runs.setdefault(m[2], {})[int(m[1])] = dict(kv.split("=") for kv in m[3].split() if kv.split("=")[1])
for who in sorted(runs):
    for key in ("decode_tok_s", "loop_tok_s"):
        vals = [float(r[key]) for r in runs[who].values() if key in r]
        if vals:
            print(f"{who} {key}: median {statistics.median(vals):.0f} [{min(vals):.0f}-{max(vals):.0f}] of {len(vals)}")
for who in sorted(runs):
    if who.startswith("runc-"):
        continue
    model = who.split("-", 1)[1]
    rc = runs.get("runc-" + model, {})
    for key in ("decode_tok_s", "loop_tok_s"):
        ratios = [float(r[key]) / float(rc[i]["loop_tok_s"]) for i, r in runs[who].items() if key in r and i in rc]
        if ratios:
            print(f"{who} {key} / runc-{model} loop: median {statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]")
PY
