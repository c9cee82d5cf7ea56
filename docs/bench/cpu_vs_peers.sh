#!/usr/bin/env bash
# kvscope-cli generate against llama2.c's run.c (fast build) and llama.cpp, one thread, greedy,
# rounds interleaved (the order flips every round), on stories260K, the default model and an
# 85M-parameter random-weight checkpoint; then threads, the machine's limits and a 1 GB file's
# load. Writes one line per run and the medians; docs/bench/cpu-perf-quiet-2cpu.txt is its output.
#
# Needs, none of them in the repository:
#   RUNC      run.c built as its Makefile's fast target: gcc -Ofast -march=native run.c -lm
#   LLAMA     docs/bench/llama_cpp_decode.cpp built (its header says how), and BINS its libraries
#   WORK      a scratch folder (the 85M and 1 GB checkpoints and the GGUF exports go there)
# Usage: RUNC=... LLAMA=... BINS=... WORK=... docs/bench/cpu_vs_peers.sh build/cli/kvscope-cli
set -euo pipefail
CLI="$1"
ROUNDS="${ROUNDS:-5}"
S=../shared/models
mkdir -p "$WORK"
[ -f "$WORK/r85m.bin" ] || "$CLI" make-model --out "$WORK/r85m.bin" --shape 85M >/dev/null
for m in stories260K default "$WORK/r85m.bin"; do
    g="$WORK/$(basename "$m" .bin).gguf"
    [ -f "$g" ] || "$CLI" export --model "$m" --gguf "$g" >/dev/null
done

# name, kvscope --model, run.c checkpoint and tokenizer, GGUF, run.c -n, kvscope new tokens
models=(
    "260K|stories260K|$S/stories260K.bin|$S/tok512.bin|$WORK/stories260K.gguf|256|252"
    "default|default|assets/models/kvscope-tiny.bin|assets/models/kvscope-tiny.tok.bin|$WORK/default.gguf|256|252"
    "85m|$WORK/r85m.bin|$WORK/r85m.bin|$WORK/r85m.tok.bin|$WORK/r85m.gguf|64|60"
)
prompt="Once upon a time"
timed() { /usr/bin/time -f "wall=%e rss_kib=%M" "$@"; }

kvs() {  # model new threads
    timed "$CLI" generate --model "$1" --prompt "$prompt" --max-new-tokens "$2" --threads "$3" \
        --timing-runs 1 2>&1 >/dev/null | sed -n 's/.*prefill \([0-9.]*\) ms; decode \([0-9.]*\) tok\/s ([a-z]*), \([0-9.]*\) tok\/s with the loop.*/prefill_ms=\1 decode_tok_s=\2 loop_tok_s=\3/p; /^wall=/p' | tr '\n' ' '
}
runc() {  # checkpoint tokenizer n
    timed "$RUNC" "$1" -z "$2" -t 0.0 -n "$3" -i "$prompt" 2>&1 >/dev/null |
        sed -n 's/achieved tok\/s: \(.*\)/decode_tok_s=\1/p; /^wall=/p' | tr '\n' ' '
}
llama() {  # gguf new
    timed "$LLAMA" "$BINS" "$1" "$prompt" "$2" 2>&1 |
        sed -n 's/.*prefill \([0-9.]*\) ms; decode \([0-9.]*\) tok.*/prefill_ms=\1 decode_tok_s=\2/p; /^wall=/p' | tr '\n' ' '
}
load() { cut -d' ' -f1 /proc/loadavg; }

echo "# $(date -u '+%F %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
# Runs "$1" once per round and model, with r, name, km, rc, rt, gg, n and new set.
each_round_and_model() {
    for r in $(seq "$ROUNDS"); do
        for spec in "${models[@]}"; do
            IFS='|' read -r name km rc rt gg n new <<<"$spec"
            "$1"
        done
    done
}
decode_round() {
    local order=(kvs runc llama)
    [ $((r % 2)) -eq 0 ] && order=(llama runc kvs)
    for who in "${order[@]}"; do
        case $who in
        kvs) echo "round=$r kvs-$name load=$(load) $(kvs "$km" "$new" 1)" ;;
        runc) echo "round=$r runc-$name load=$(load) $(runc "$rc" "$rt" "$n")" ;;
        llama) echo "round=$r llama-$name load=$(load) $(llama "$gg" "$new")" ;;
        esac
    done
}
first_token_round() {
    echo "round=$r ttft-kvs-$name load=$(load) $(kvs "$km" 1 1)"
    echo "round=$r ttft-runc-$name load=$(load) $(runc "$rc" "$rt" 6)"
    echo "round=$r ttft-llama-$name load=$(load) $(llama "$gg" 1)"
}
threads_round() {
    echo "round=$r t1-$name load=$(load) $(kvs "$km" "$new" 1)"
    echo "round=$r t2-$name load=$(load) $(kvs "$km" "$new" 2)"
}
echo "## decode, 1 thread, $ROUNDS interleaved rounds"
each_round_and_model decode_round
echo "## time to first token: the whole process for one new token (load included)"
each_round_and_model first_token_round
echo "## threads: generate --threads 1 and 2, interleaved"
each_round_and_model threads_round
echo "## limits"
"$CLI" bench --limits --threads 2 --repeats 7
echo "## a 1 GB checkpoint, warm in the page cache: info (open, validate, map) and one new token"
[ -f "$WORK/r1g.bin" ] || "$CLI" make-model --out "$WORK/r1g.bin" --shape 1GB >/dev/null
echo "file_bytes=$(stat -c %s "$WORK/r1g.bin")"
cat "$WORK/r1g.bin" >/dev/null
for r in 1 2 3; do
    echo "round=$r info-1g $(timed "$CLI" info --model "$WORK/r1g.bin" 2>&1 >/dev/null | tr '\n' ' ')"
    echo "round=$r gen1-1g $(kvs "$WORK/r1g.bin" 1 1)"
done
