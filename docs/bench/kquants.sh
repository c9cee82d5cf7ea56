#!/usr/bin/env bash
# Quantised GGUF files, kvscope against llama.cpp at the same quant: an 85M-parameter random-weight
# model (dim 768, hidden 2048, 12 layers, vocab 512) written F32 by `kvscope-cli export --gguf`
# and quantised by llama.cpp's own quantizer (llama_cpp_quantize.cpp: Q8_0, Q4_K_M, Q5_K_M,
# Q6_K); each file decoded by kvscope-cli generate and by llama.cpp's C API
# (llama_cpp_decode.cpp), one thread, greedy, "Once upon a time", rounds interleaved (the order
# flips every round). Then the machine's read bandwidth (bench --limits), kvscope-cli bench on
# each file (decode GB/s of the weights as kept, the logit difference against float32), the
# integer dot-product paths against each other, and the resident memory against the file. docs/bench/kquants.md is its output, summarised.
#
# Needs, none of them in the repository:
#   LLAMA     llama_cpp_decode.cpp built, QUANT llama_cpp_quantize.cpp built (their headers say
#             how), BINS their libraries (build/peer/.../bins/linux-x64 after scripts/peer.sh)
#   WORK      a scratch folder (the 85M model and its GGUF files go there)
# Usage: LLAMA=... QUANT=... BINS=... WORK=... docs/bench/kquants.sh build/cli/kvscope-cli
set -euo pipefail
CLI="$1"
ROUNDS="${ROUNDS:-5}"
NEW="${NEW:-128}"
mkdir -p "$WORK"
[ -f "$WORK/r85m.bin" ] || "$CLI" make-model --out "$WORK/r85m.bin" --shape 85M >/dev/null
[ -f "$WORK/r85m-f32.gguf" ] || "$CLI" export --model "$WORK/r85m.bin" --gguf "$WORK/r85m-f32.gguf" >/dev/null
types=(f32 q8_0 q4_k_m q5_k_m q6_k)
for t in "${types[@]:1}"; do
    [ -f "$WORK/r85m-$t.gguf" ] || "$QUANT" "$BINS" "$WORK/r85m-f32.gguf" "$WORK/r85m-$t.gguf" "$t" >/dev/null
done
prompt="Once upon a time"
timed() { /usr/bin/time -f "wall=%e rss_kib=%M" "$@"; }
load() { cut -d' ' -f1 /proc/loadavg; }
kvs() {  # gguf
    timed "$CLI" generate --model "$1" --prompt "$prompt" --max-new-tokens "$NEW" --threads 1 \
        --timing-runs 1 2>&1 >/dev/null | sed -n 's/.*prefill \([0-9.]*\) ms; decode \([0-9.]*\) tok\/s ([a-z]*), \([0-9.]*\) tok\/s with the loop.*/prefill_ms=\1 decode_tok_s=\2 loop_tok_s=\3/p; /^wall=/p' | tr '\n' ' '
}
llama() {  # gguf
    timed "$LLAMA" "$BINS" "$1" "$prompt" "$NEW" 2>&1 |
        sed -n 's/.*prefill \([0-9.]*\) ms; decode \([0-9.]*\) tok.*/prefill_ms=\1 decode_tok_s=\2/p; /^wall=/p' | tr '\n' ' '
}

echo "# $(date -u '+%F %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for t in "${types[@]}"; do echo "file_bytes-$t=$(stat -c %s "$WORK/r85m-$t.gguf")"; done
echo "## limits, before"
"$CLI" bench --limits --repeats 7 | grep -E "read|load"
echo "## decode, 1 thread, $ROUNDS interleaved rounds, $NEW new tokens"
for r in $(seq "$ROUNDS"); do
    for t in "${types[@]}"; do
        g="$WORK/r85m-$t.gguf"
        if [ $((r % 2)) -eq 1 ]; then
            echo "round=$r kvs-$t load=$(load) $(kvs "$g")"
            echo "round=$r llama-$t load=$(load) $(llama "$g")"
        else
            echo "round=$r llama-$t load=$(load) $(llama "$g")"
            echo "round=$r kvs-$t load=$(load) $(kvs "$g")"
        fi
    done
done
echo "## the integer dot-product paths (KVSCOPE_DOT), and the float path kept for checking"
for r in $(seq "$ROUNDS"); do
    for p in avx512vnni avxvnni avx2 float; do
        for t in q8_0 q4_k_m; do
            [ "$p" = float ] && [ "$r" -gt 1 ] && continue  # slow: one round tells
            echo "round=$r dot-$p-$t load=$(load) $(KVSCOPE_DOT=$p kvs "$WORK/r85m-$t.gguf")"
        done
    done
done
echo "## kvscope-cli bench (decode GB/s of the weights as kept; per-op times; logits against float32)"
for t in q8_0 q4_k_m; do
    "$CLI" bench --model "$WORK/r85m-$t.gguf" --lengths 64 --repeats 9 --wide 2>/dev/null |
        grep -E "^ +L |^ +64 +decode_cached|^weights|dot products|max .logit|read per decode|^load"
done
echo "## resident memory: the file, info (mapped, nothing read), generate with one new token"
for t in "${types[@]}"; do
    g="$WORK/r85m-$t.gguf"
    echo "rss-$t file_bytes=$(stat -c %s "$g")" \
        "info_rss_kib=$(/usr/bin/time -f %M "$CLI" info --model "$g" 2>&1 >/dev/null | tail -1)" \
        "gen1_rss_kib=$(/usr/bin/time -f %M "$CLI" generate --model "$g" --max-new-tokens 1 2>&1 >/dev/null | tail -1)"
done
# The process's own floor: the program's code and the shared libraries it maps, no model.
echo "rss-floor kvscope-cli --version rss_kib=$(/usr/bin/time -f %M "$CLI" --version 2>&1 >/dev/null | tail -1)"
echo "## limits, after"
"$CLI" bench --limits --repeats 7 | grep -E "read|load"
