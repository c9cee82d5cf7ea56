#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (docs/gpu/README.md): a GPU-only build (no
# window) into build-gpu/, then, the most telling first and each step within its limit: the gpu
# tests, cpu against cuda (the same greedy tokens up to a near tie), each decode path's times (op by
# op, graph, fused), an 85M-parameter model in f32 and bf16 beside the copy bandwidth, the same
# models in Hugging Face transformers (the peer), and compute-sanitizer's four tools last. A step
# that could not run (no device, no compute-sanitizer, no PyTorch) fails: nothing passes by absence.
# The report is rewritten after every step, so a run cut short keeps every finished figure.
#
#   scripts/gpu-check.sh --fetch-deps        where apt works: Catch2, CLI11, nlohmann-json and
#                                            unicode-data as .deb files into gpu-deps/ (ignored by
#                                            git: the device call must carry it)
#   scripts/gpu-check.sh --dry-run           every step, its command and its time limit
#   scripts/gpu-check.sh --out DIR           run them all; DIR gets gpu-check.txt (the report) and
#                                            gpu-check-logs.tar.gz (every log and the report)
#   scripts/gpu-check.sh --rehearse [--out DIR]
#                                            every step here, in order, without a GPU: the same
#                                            prompts, models, files and reports, the cuda steps on
#                                            cuda-emulated, compute-sanitizer's steps as the same
#                                            commands without it, the peer on the CPU (or said not
#                                            run where PyTorch or transformers is missing)
# Environment: KVS_GPU_ARCH (default: the device's compute capability, else 90), KVS_GPU_BUILD
# (build folder), KVS_GPU_BUDGET (seconds for all the steps, default 420: each step's limit is cut
# to what is left, and a step with under 10 s left is not run, which fails it), KVS_GPU_ONLY=
# step,step (those alone), KVS_GPU_CMAKE_ARGS (more configure arguments).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEPS="$ROOT/gpu-deps"
DEB_PACKAGES=(catch2 libcli11-dev nlohmann-json3-dev unicode-data)
mode=run
dry=0
OUT_DIR=""
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry=1 ;;
        --rehearse) mode=rehearse ;;
        --fetch-deps) mode=fetch ;;
        --out)
            [ $# -ge 2 ] || { echo "gpu-check: --out needs a folder" >&2; exit 2; }
            OUT_DIR="$2"
            shift
            ;;
        *)
            echo "gpu-check: unknown argument '$1' (--dry-run, --rehearse, --out DIR, --fetch-deps)" >&2
            exit 2
            ;;
    esac
    shift
done
rehearse=0
[ "$mode" = rehearse ] && rehearse=1
BUILD="${KVS_GPU_BUILD:-$ROOT/build-gpu$([ "$rehearse" = 1 ] && echo -rehearsal)}"
LOG="$BUILD/gpu-check"
OUT_DIR="${OUT_DIR:-$BUILD/gpu-check-out}"
REPORT="$OUT_DIR/gpu-check.txt"
ARCHIVE="$OUT_DIR/gpu-check-logs.tar.gz"

if [ "$mode" = fetch ]; then
    mkdir -p "$DEPS"
    (cd "$DEPS" && apt-get download "${DEB_PACKAGES[@]}") || exit 1
    du -sh "$DEPS"
    echo "gpu-check: carry gpu-deps/ to the GPU machine (device tool: carry [\"gpu-deps\"])"
    exit 0
fi

# nvcc: on the PATH, else where CUDA's installers put it.
NVCC="$(command -v nvcc || true)"
if [ -z "$NVCC" ]; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/cuda/bin /usr/lib/nvidia-cuda-toolkit/bin; do
        [ -x "$d/nvcc" ] && NVCC="$d/nvcc" && break
    done
fi
[ -n "$NVCC" ] && export PATH="$(dirname "$NVCC"):$PATH"
SANITIZER="$(command -v compute-sanitizer || true)"
[ -z "$SANITIZER" ] && [ -n "$NVCC" ] &&
    for s in "$(dirname "$NVCC")/compute-sanitizer" "$(dirname "$NVCC")/../compute-sanitizer/compute-sanitizer"; do
        [ -x "$s" ] && SANITIZER="$s" && break
    done

if [ -z "${KVS_GPU_ARCH:-}" ]; then
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"
    KVS_GPU_ARCH="$(echo "$cap" | tr -d '. ')"
    [ -z "$KVS_GPU_ARCH" ] && KVS_GPU_ARCH=90
fi
CLI="$BUILD/cli/kvscope-cli"
SHORT='Once upon a time'
# 104 tokens on the default model (context 256): its decode steps attend to more than one 64-key
# chunk (the split and the combine), and its prefill walks two (flash-style). The rehearsal runs
# every command that uses it, so a prompt over a model's context fails there first.
LONG="$(for _ in $(seq 6); do printf 'Once upon a time there was a girl. She liked to play in the sun. '; done)"

# What the rehearsal changes, and nothing else: the backend, --require-gpu, compute-sanitizer, the
# peer's device, the 85M model's decode length and its prefills' prompt (the emulator runs a token
# of it in seconds, and the long prompt is about 400 tokens of its tokenizer).
if [ "$rehearse" = 1 ]; then
    B=cuda-emulated REQUIRE= PEER_DEVICE=cpu N85=3 RUNS85=1 P85="$SHORT"
    GPU_TESTS_ENV="KVSCOPE_GPU_TESTS_BACKEND=cuda-emulated"
    # Configured as on a bare GPU machine: the carried packages alone, none of the system's.
    [ -d "$DEPS" ] || [ "$dry" = 1 ] || bash "$0" --fetch-deps >&2 || exit 1
    CMAKE_EXTRA="-DCMAKE_IGNORE_PREFIX_PATH=/usr"
else
    B=cuda REQUIRE=--require-gpu PEER_DEVICE=cuda N85=128 RUNS85=9 P85="$LONG" GPU_TESTS_ENV= CMAKE_EXTRA=
fi
sanitize() {  # sanitize TOOL: the prefix that runs a command under compute-sanitizer's TOOL
    if [ "$rehearse" = 1 ]; then
        echo "echo 'rehearsal: compute-sanitizer --tool $1 not run; the same commands without it:';"
    else
        echo "[ -n '$SANITIZER' ] || { echo 'not run: compute-sanitizer not found beside nvcc or on the PATH'; exit 1; }; '$SANITIZER' --tool $1 --target-processes all --error-exitcode 1"
    fi
}

# The header-only packages: carried .deb files unpacked here, or the system's.
dep_args=()
if compgen -G "$DEPS/*.deb" >/dev/null || [ "$rehearse" = 1 ]; then
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

# The order is the value order: what makes the run worth having comes first, so a run cut short
# (budget, device lease) loses the least. The limits add up to at most 420 s.
step probe 5 "echo \"nvcc: ${NVCC:-not found (PATH, /usr/local/cuda*/bin, /opt/cuda/bin)}\"; [ -n '$NVCC' ] && '$NVCC' --version | tail -n 2 | head -n 1; echo \"driver: \$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1 || echo 'nvidia-smi not found')\"; echo \"compute-sanitizer: ${SANITIZER:-not found}\"; echo \"host compiler: \$(c++ --version 2>&1 | head -n 1)\"; echo \"cmake: \$(cmake --version | head -n 1)\"; python3 -c 'import torch, transformers; print(\"torch\", torch.__version__, \"transformers\", transformers.__version__, \"CUDA device\", torch.cuda.is_available())' 2>&1 | tail -n 1 | sed 's/^/peer: /'; echo \"carried packages: \$(ls '$DEPS'/*.deb 2>/dev/null | wc -l) .deb files in gpu-deps/\"; [ -n '$NVCC' ]"
step deps 10 "rm -rf '$DEPS/root' && mkdir -p '$DEPS/root' && for f in '$DEPS'/*.deb; do [ -e \"\$f\" ] || { echo 'no carried .deb files (gpu-deps/): the system packages are used'; exit 0; }; dpkg -x \"\$f\" '$DEPS/root' && echo \"unpacked \$(basename \"\$f\")\"; done"
step configure 25 "cmake -S '$ROOT' -B '$BUILD' ${generator[*]} -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_GUI=OFF -DCMAKE_CUDA_COMPILER='$NVCC' -DCMAKE_CUDA_ARCHITECTURES=$KVS_GPU_ARCH ${dep_args[*]@Q} $CMAKE_EXTRA ${KVS_GPU_CMAKE_ARGS:-}"
step build 110 "cmake --build '$BUILD' -j \$(nproc) --target kvscope_gpu_tests kvscope-cli"
# All 8 gpu tests must run and pass; a skipped one (no device) fails the step.
step gpu-tests 45 "cd '$BUILD' && $GPU_TESTS_ENV CUDA_MODULE_LOADING=EAGER KVSCOPE_REQUIRE_GPU=1 '$ROOT/scripts/ctest_checked.sh' 8 0 -L gpu --output-on-failure -V"
# The same greedy tokens on cpu and cuda up to the first near tie (a cuBLAS prefill rounds otherwise).
step text 15 "'$CLI' generate --backend cpu --prompt '$SHORT' --max-new-tokens 96 --trace-json '$LOG/text-cpu.json' > '$LOG/text-cpu.txt' && '$CLI' generate --backend $B --prompt '$SHORT' --max-new-tokens 96 --trace-json '$LOG/text-cuda.json' > '$LOG/text-cuda.txt' && python3 '$ROOT/scripts/gpu_compare.py' text '$LOG/text-cpu.json' '$LOG/text-cuda.json'"
# Op by op (every op timed: the gate holds the stream only with modules loaded eagerly), then the
# graph and the fused path; then the fused path's kernels one by one and a step's fixed cost.
step paths 25 "CUDA_MODULE_LOADING=EAGER '$CLI' generate --backend $B --prompt '$SHORT' --max-new-tokens 96 --op-times --timing-runs 9 && '$CLI' generate --backend $B --prompt '$SHORT' --max-new-tokens 96 --timing-runs 9"
step model-85M 10 "rm -rf '$LOG/m85' && mkdir -p '$LOG/m85' && '$CLI' make-model --shape 85M --out '$LOG/m85/m85.bin' && '$CLI' info --model '$LOG/m85/m85.bin' && '$CLI' export --model '$LOG/m85/m85.bin' --hf '$LOG/m85/hf' && '$CLI' export --model default --hf '$LOG/default-hf'"
step speed-85M 30 "for w in f32 bf16; do echo \"== --weights \$w\"; CUDA_MODULE_LOADING=EAGER '$CLI' generate --model '$LOG/m85/m85.bin' --backend $B --weights \$w --prompt '$SHORT' --max-new-tokens $N85 --op-times --timing-runs $RUNS85 >/dev/null || exit 1; done; '$CLI' generate --model '$LOG/m85/m85.bin' --backend $B --prompt '$P85' --max-new-tokens 2 --gemm fp32 > /dev/null && '$CLI' generate --model '$LOG/m85/m85.bin' --backend $B --prompt '$P85' --max-new-tokens 2 --gemm tf32 > /dev/null"
# Each model's own prompt ids (its own tokenizer) and token count, from kvscope's trace of it.
step peer 60 "set -e; '$CLI' generate --backend $B --prompt '$SHORT' --max-new-tokens 64 --trace-json '$LOG/peer-kvs-default.json' > /dev/null; '$CLI' generate --model '$LOG/m85/m85.bin' --backend $B --prompt '$SHORT' --max-new-tokens $N85 --trace-json '$LOG/peer-kvs-85M.json' > /dev/null; python3 '$ROOT/scripts/gpu_peer.py' --hf '$LOG/default-hf' --trace '$LOG/peer-kvs-default.json' --device $PEER_DEVICE > '$LOG/peer-default.json' || true; python3 '$ROOT/scripts/gpu_peer.py' --hf '$LOG/m85/hf' --trace '$LOG/peer-kvs-85M.json' --device $PEER_DEVICE --runs 3 > '$LOG/peer-85M.json' || true; python3 '$ROOT/scripts/gpu_compare.py' peer $([ "$rehearse" = 1 ] && echo --rehearsal) '$LOG/peer-kvs-default.json' '$LOG/peer-default.json' '$LOG/peer-kvs-85M.json' '$LOG/peer-85M.json'"
step kernels 15 "'$CLI' kernels --repeats 20 $REQUIRE"
step sync 10 "KVSCOPE_CUDA_SYNC=1 '$CLI' generate --backend $B --prompt '$SHORT' --max-new-tokens 8 --op-times"
# compute-sanitizer over every path the decode and prefill take: the fused kernels as one graph
# with every capture (probs of three chunks of keys, q, K/V), the op-by-op kernels with every op
# timed and the same step as one graph, and a 141-token prefill. No gate: a launch under the
# sanitizer may wait for the kernel before it.
san_run="'$CLI' generate --backend $B --prompt '$LONG' --max-new-tokens 6 --trace-json '$LOG/san.json' > /dev/null && '$CLI' generate --backend $B --prompt '$LONG' --max-new-tokens 4 --op-times --timing-runs 1 > /dev/null && echo 'both runs ended'"
declare -A san_limit=([memcheck]=25 [racecheck]=15 [initcheck]=10 [synccheck]=10)
for tool in memcheck racecheck initcheck synccheck; do
    step "sanitizer-$tool" "${san_limit[$tool]}" "$(sanitize "$tool") env KVSCOPE_CUDA_GATE=0 bash -c \"$san_run\""
done

total=0
for s in "${steps[@]}"; do total=$((total + limit[$s])); done
# The rehearsal's limits: the emulator and a 2-core machine instead of a GPU and 16 cores.
if [ "$rehearse" = 1 ]; then
    for s in "${steps[@]}"; do
        case "$s" in
            configure | build) limit[$s]=1500 ;;
            *) limit[$s]=$((limit[$s] * 12)) ;;
        esac
    done
fi
rtotal=0
for s in "${steps[@]}"; do rtotal=$((rtotal + limit[$s])); done
budget="${KVS_GPU_BUDGET:-$([ "$rehearse" = 1 ] && echo "$rtotal" || echo 420)}"

if [ "$dry" = 1 ]; then
    echo "gpu-check: ${#steps[@]} steps, build folder $BUILD, architecture sm_$KVS_GPU_ARCH, report $REPORT, logs $ARCHIVE"
    [ "$rehearse" = 1 ] && echo "gpu-check: a rehearsal: the cuda steps on cuda-emulated, compute-sanitizer's steps without it, the peer on the CPU"
    for s in "${steps[@]}"; do
        printf '%-22s (at most %4s s)  %s\n' "$s" "${limit[$s]}" "${cmd[$s]}"
    done
    echo "gpu-check: the limits add up to $total s on a GPU machine; all the steps together get" \
        "$budget s (KVS_GPU_BUDGET), each cut to what is left"
    exit 0
fi

mkdir -p "$LOG" "$OUT_DIR"
status=0
results=()
start=$SECONDS

# The report, rewritten after every step: what has run so far, and the figures its logs hold.
write_report() {
    {
        echo "kvscope gpu-check report (scripts/gpu-check.sh$([ "$rehearse" = 1 ] && echo ' --rehearse'))"
        [ "$rehearse" = 1 ] && echo "REHEARSAL without a GPU: the cuda steps ran on cuda-emulated (the CUDA kernels' own code on the CPU, one thread at a time), compute-sanitizer's steps as the same commands without it, the peer on the CPU. No time here is a GPU time."
        echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); $((SECONDS - start)) s so far, budget $budget s"
        echo "architecture built: sm_$KVS_GPU_ARCH"
        echo
        echo "== prerequisites"
        cat "$LOG/probe.log" 2>/dev/null
        echo
        echo "== steps ($1)"
        printf '%s\n' "${results[@]}"
        echo
        echo "== gpu tests (device, agreement, times)"
        sed -n 's/^[0-9]*: \(device\|model\|rehearsal\|  \)/\1/p' "$LOG/gpu-tests.log" 2>/dev/null | head -n 40
        echo
        echo "== cpu against cuda, default model"
        grep -h '^text:' "$LOG/text.log" 2>/dev/null
        grep -h 'kvscope: decode steps' "$LOG/paths.log" 2>/dev/null
        echo
        echo "== 85M model (make-model --shape 85M): decode paths, f32 then bf16"
        grep -h 'parameters' "$LOG/model-85M.log" 2>/dev/null | head -n 1
        grep -hE '^== |kvscope: (decode|prefill)' "$LOG/speed-85M.log" 2>/dev/null
        echo
        echo "== the peer: Hugging Face transformers on the same device"
        grep -h '^peer' "$LOG/peer.log" 2>/dev/null
        echo
        echo "== compute-sanitizer"
        for tool in memcheck racecheck initcheck synccheck; do
            echo "$tool: $(grep -hE 'ERROR SUMMARY|not run|both runs ended' "$LOG/sanitizer-$tool.log" 2>/dev/null | tail -n 1)"
        done
    } >"$REPORT.part" && mv "$REPORT.part" "$REPORT"
    cp "$REPORT" "$LOG/gpu-check.txt"
    tar -czf "$ARCHIVE.part" -C "$BUILD" --exclude='gpu-check/m85' --exclude='gpu-check/default-hf' \
        gpu-check 2>/dev/null && mv "$ARCHIVE.part" "$ARCHIVE"
}

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
    write_report "running"
    # Nothing further can run without a build.
    if [ "$rc" != 0 ] && { [ "$s" = probe ] || [ "$s" = configure ] || [ "$s" = build ]; }; then break; fi
done
results+=("overall: $([ "$status" = 0 ] && echo PASSED || echo FAILED) in $((SECONDS - start)) s")
write_report "finished"
cat "$REPORT"
echo "gpu-check: report $REPORT, every log in $ARCHIVE" >&2
exit "$status"
