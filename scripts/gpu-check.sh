#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (docs/cuda.md, docs/gpu/README.md): a
# GPU-only build (no window, so no GUI packages) into build-gpu/, then the gpu tests, cpu against
# cuda (the same greedy text; each decode path's time and kernel launches), an 85M-parameter model
# in f32 and bf16, the same models in Hugging Face transformers on the same GPU (the peer), and
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck over the decode graph, fused
# and op by op, multi-chunk decode attention with probs and a long prefill. Every step that could
# not run (no device, no compute-sanitizer, no PyTorch) is a failure: nothing passes by absence.
# The report is one text file, docs/gpu/gpu-check.txt.
#
#   scripts/gpu-check.sh --fetch-deps   where apt works (not the GPU machine): Catch2, CLI11,
#                                       nlohmann-json and unicode-data as .deb files into gpu-deps/
#                                       (git ignores it; the device call carries it)
#   scripts/gpu-check.sh --dry-run      every step it will run, with its command and time limit
#   scripts/gpu-check.sh                run them all; exit 0 only when every step passed
# Environment: KVS_GPU_ARCH (default: the device's compute capability, else 90), KVS_GPU_BUILD
# (build folder), KVS_GPU_REPORT (the report file), KVS_GPU_BUDGET (seconds for all the steps,
# default 480: each step's limit is cut to what is left, and a step with under 10 s left is not
# run, which fails it; the most telling steps come first), KVS_GPU_ONLY=step,step (run those
# alone), KVS_GPU_CMAKE_ARGS (more configure arguments: -DCMAKE_IGNORE_PREFIX_PATH=/usr makes
# a machine with the packages installed find only the carried ones, as a bare one would).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KVS_GPU_BUILD:-$ROOT/build-gpu}"
LOG="$BUILD/gpu-check"
REPORT="${KVS_GPU_REPORT:-$ROOT/docs/gpu/gpu-check.txt}"
DEPS="$ROOT/gpu-deps"
DEB_PACKAGES=(catch2 libcli11-dev nlohmann-json3-dev unicode-data)
export PATH="$PATH:/usr/local/cuda/bin"
mode=run
case "${1:-}" in
    --dry-run) mode=dry ;;
    --fetch-deps) mode=fetch ;;
    "") ;;
    *)
        echo "gpu-check: unknown argument '$1' (--dry-run, --fetch-deps or nothing)" >&2
        exit 2
        ;;
esac

if [ "$mode" = fetch ]; then
    mkdir -p "$DEPS"
    (cd "$DEPS" && apt-get download "${DEB_PACKAGES[@]}") || exit 1
    du -sh "$DEPS"
    echo "gpu-check: carry gpu-deps/ to the GPU machine (device tool: carry [\"gpu-deps\"])"
    exit 0
fi

if [ -z "${KVS_GPU_ARCH:-}" ]; then
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"
    KVS_GPU_ARCH="$(echo "$cap" | tr -d '. ')"
    [ -z "$KVS_GPU_ARCH" ] && KVS_GPU_ARCH=90
fi
CLI="$BUILD/cli/kvscope-cli"
# A prompt of about 130 tokens on the default model: its decode steps attend to more than one
# 64-key chunk (the split and the combine), and its prefill walks several chunks (flash-style).
LONG="$(for _ in $(seq 12); do printf 'Once upon a time there was a little girl who loved the sun. '; done)"

# The header-only packages: carried .deb files unpacked here, or the system's.
dep_args=()
if compgen -G "$DEPS/*.deb" >/dev/null; then
    dep_args=(-DCMAKE_PREFIX_PATH="$DEPS/root/usr" -DKVSCOPE_UNICODE_DIR="$DEPS/root/usr/share/unicode"
        "-DCMAKE_CXX_FLAGS=-isystem $DEPS/root/usr/include")
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

steps=()
declare -A cmd limit
step() {  # step NAME SECONDS COMMAND: run by bash, logged to $LOG/NAME.log
    steps+=("$1")
    limit[$1]="$2"
    cmd[$1]="$3"
}

step deps 30 "rm -rf '$DEPS/root' && mkdir -p '$DEPS/root' && for f in '$DEPS'/*.deb; do [ -e \"\$f\" ] || { echo 'no carried .deb files: the system packages are used'; exit 0; }; dpkg -x \"\$f\" '$DEPS/root' && echo \"unpacked \$(basename \"\$f\")\"; done"
step configure 90 "cmake -S '$ROOT' -B '$BUILD' ${generator[*]} -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=$KVS_GPU_ARCH ${dep_args[*]@Q} ${KVS_GPU_CMAKE_ARGS:-}"
step build 240 "cmake --build '$BUILD' -j \$(nproc) --target kvscope_gpu_tests kvscope-cli"
# All 7 gpu tests must run and pass; a skipped one (no device) fails the step.
step gpu-tests 150 "cd '$BUILD' && KVSCOPE_REQUIRE_GPU=1 '$ROOT/scripts/ctest_checked.sh' 7 0 -L gpu --output-on-failure -V"
step kernels 60 "'$CLI' kernels --repeats 20 --require-gpu"
step text 60 "'$CLI' generate --backend cpu --prompt 'Once upon a time' --max-new-tokens 96 > '$LOG/text-cpu.txt' && '$CLI' generate --backend cuda --prompt 'Once upon a time' --max-new-tokens 96 > '$LOG/text-cuda.txt' && cmp '$LOG/text-cpu.txt' '$LOG/text-cuda.txt' && echo 'same text on cpu and cuda:' && cat '$LOG/text-cuda.txt'"
step paths 60 "'$CLI' generate --backend cuda --prompt 'Once upon a time' --max-new-tokens 96 --op-times --timing-runs 9 && '$CLI' generate --backend cuda --prompt 'Once upon a time' --max-new-tokens 96 --timing-runs 9"
step sync 30 "KVSCOPE_CUDA_SYNC=1 '$CLI' generate --backend cuda --prompt 'Once upon a time' --max-new-tokens 8 --op-times"
# compute-sanitizer over every path the decode and prefill take: the fused kernels as one graph
# with every capture (probs of more than one chunk of keys, q, K/V), the op-by-op kernels with
# every op timed (the gate kernel, events) and the same step as one graph, and a long prefill.
san_run="'$CLI' generate --backend cuda --prompt '$LONG' --max-new-tokens 6 --trace-json '$LOG/san.json' && '$CLI' generate --backend cuda --prompt '$LONG' --max-new-tokens 4 --op-times --timing-runs 1"
for tool in memcheck racecheck initcheck synccheck; do
    step "sanitizer-$tool" 120 "command -v compute-sanitizer >/dev/null || { echo 'not run: compute-sanitizer is not on the PATH'; exit 1; }; compute-sanitizer --tool $tool --target-processes all --error-exitcode 1 bash -c \"$san_run\""
done

step model-85M 90 "rm -rf '$LOG/m85' && mkdir -p '$LOG/m85' && '$CLI' make-model --shape 85M --out '$LOG/m85/m85.bin' && '$CLI' info --model '$LOG/m85/m85.bin' && '$CLI' export --model '$LOG/m85/m85.bin' --hf '$LOG/m85/hf' && '$CLI' export --model default --hf '$LOG/default-hf'"
step speed-85M 90 "for w in f32 bf16; do echo \"== --weights \$w\"; '$CLI' generate --model '$LOG/m85/m85.bin' --backend cuda --weights \$w --prompt 'Once upon a time' --max-new-tokens 128 --op-times --timing-runs 9 >/dev/null || exit 1; done; '$CLI' generate --model '$LOG/m85/m85.bin' --backend cuda --prompt '$LONG' --max-new-tokens 8 --gemm fp32 > /dev/null && '$CLI' generate --model '$LOG/m85/m85.bin' --backend cuda --prompt '$LONG' --max-new-tokens 8 --gemm tf32 > /dev/null"
step peer 240 "set -e; '$CLI' generate --backend cuda --prompt 'Once upon a time' --max-new-tokens 64 --trace-json '$LOG/default.json' > /dev/null; ids=\$(python3 -c \"import json; t=json.load(open('$LOG/default.json')); print(','.join(map(str, t['prompt_tokens'])))\"); python3 '$ROOT/scripts/gpu_peer.py' --hf '$LOG/default-hf' --ids \$ids --new 64 > '$LOG/peer-default.json'; python3 '$ROOT/scripts/gpu_peer.py' --hf '$LOG/m85/hf' --ids \$ids --new 128 --runs 3 > '$LOG/peer-85M.json'; python3 - '$LOG' <<'PY'
import json, sys
log = sys.argv[1]
t = json.load(open(log + '/default.json'))
mine = t['tokens'][len(t['prompt_tokens']):]
ok = True
for name in ('default', '85M'):
    p = json.load(open(f'{log}/peer-{name}.json'))
    print(name, json.dumps({k: v for k, v in p.items() if k not in ('eager', 'static_cuda_graphs')}))
    for mode in ('eager', 'static_cuda_graphs'):
        m = p.get(mode, {})
        if 'ids' not in m:
            print(f'  {mode}: {m.get(\"error\", p.get(\"error\", \"not run\"))}')
            ok = ok and mode != 'eager'
            continue
        same = m['ids'][:len(mine)] == mine if name == 'default' else None
        print(f'  {mode}: decode {m[\"decode_tok_s\"]:.1f} tok/s' + ('' if same is None else f', same greedy ids as kvscope: {same}'))
        ok = ok and same is not False
sys.exit(0 if ok else 1)
PY"

if [ "$mode" = dry ]; then
    echo "gpu-check: ${#steps[@]} steps, build folder $BUILD, architecture sm_$KVS_GPU_ARCH, report $REPORT"
    total=0
    for s in "${steps[@]}"; do
        printf '%-22s (at most %3s s)  %s\n' "$s" "${limit[$s]}" "${cmd[$s]}"
        total=$((total + limit[$s]))
    done
    echo "gpu-check: the limits add up to $total s; all the steps together get" \
        "${KVS_GPU_BUDGET:-480} s (KVS_GPU_BUDGET), each cut to what is left"
    exit 0
fi

mkdir -p "$LOG" "$(dirname "$REPORT")"
status=0
results=()
start=$SECONDS
budget="${KVS_GPU_BUDGET:-480}"
for s in "${steps[@]}"; do
    [ -n "${KVS_GPU_ONLY:-}" ] && [[ ",$KVS_GPU_ONLY," != *",$s,"* ]] && continue
    left=$((budget - (SECONDS - start)))
    t=${limit[$s]}
    [ "$left" -lt "$t" ] && t=$left
    if [ "$t" -lt 10 ]; then
        results+=("$s: FAILED (not run: the ${budget} s budget is spent)")
        status=1
        continue
    fi
    echo "== $s" >&2
    t0=$SECONDS
    timeout "$t" bash -c "${cmd[$s]}" >"$LOG/$s.log" 2>&1
    rc=$?
    took=$((SECONDS - t0))
    if [ "$rc" = 0 ]; then
        results+=("$s: passed (${took} s)")
    else
        [ "$rc" = 124 ] && why="over its $t s" || why="exit $rc"
        results+=("$s: FAILED ($why, ${took} s; log $LOG/$s.log)")
        status=1
    fi
    tail -n 4 "$LOG/$s.log" >&2
    # Nothing further can run without a build.
    if [ "$rc" != 0 ] && { [ "$s" = configure ] || [ "$s" = build ]; }; then break; fi
done

{
    echo "kvscope gpu-check report (scripts/gpu-check.sh)"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); total $((SECONDS - start)) s"
    echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 2 | head -n 1)"
    if command -v nvidia-smi >/dev/null; then
        echo "nvidia-smi: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
            --format=csv,noheader 2>&1 | head -n 1)"
    else
        echo "nvidia-smi: not found"
    fi
    echo "architecture built: sm_$KVS_GPU_ARCH"
    echo
    echo "== steps"
    printf '%s\n' "${results[@]}"
    echo "overall: $([ "$status" = 0 ] && echo PASSED || echo FAILED)"
    echo
    echo "== gpu tests (device, agreement, times)"
    grep -hE '^(device|model|  )' "$LOG/gpu-tests.log" 2>/dev/null | head -n 30
    echo
    echo "== cpu against cuda, default model"
    grep -h -A1 '^same text' "$LOG/text.log" 2>/dev/null | head -n 2
    grep -h 'kvscope: decode steps' "$LOG/paths.log" "$LOG/text.log" 2>/dev/null
    echo
    echo "== 85M model (make-model --shape 85M): decode paths, f32 then bf16"
    grep -h 'parameters' "$LOG/model-85M.log" 2>/dev/null | head -n 1
    grep -hE '^== |kvscope: ' "$LOG/speed-85M.log" 2>/dev/null
    echo
    echo "== the peer: Hugging Face transformers on the same GPU"
    cat "$LOG/peer.log" 2>/dev/null | tail -n 12
    echo
    echo "== compute-sanitizer"
    for tool in memcheck racecheck initcheck synccheck; do
        echo "$tool: $(grep -hE 'ERROR SUMMARY|not run' "$LOG/sanitizer-$tool.log" 2>/dev/null | tail -n 1)"
    done
} >"$REPORT"
cat "$REPORT"
exit "$status"
