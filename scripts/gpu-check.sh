#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (docs/cuda.md): builds kvscope with CUDA into
# build-gpu/, runs the gpu tests (a missing device is a failure here, not a skip), runs them again
# under compute-sanitizer's memcheck, racecheck, synccheck and initcheck where the toolkit has it,
# and prints a report to paste into a bug report. Exit 0 only when everything ran and passed.
#   KVS_GPU_ARCH=90 scripts/gpu-check.sh     build for one architecture only (faster)
#   KVS_GPU_BUILD=DIR                        another build folder
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KVS_GPU_BUILD:-$ROOT/build-gpu}"
LOG="$BUILD/gpu-check"
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$LOG"
status=0
results=()

step() {  # step NAME COMMAND...: runs it, logs it, records pass/fail
    local name="$1"
    shift
    echo "== $name" >&2
    if "$@" >"$LOG/$name.log" 2>&1; then
        results+=("$name: passed")
    else
        results+=("$name: FAILED (exit $?; log $LOG/$name.log)")
        status=1
    fi
    tail -n 5 "$LOG/$name.log" >&2
}

nvcc_bin="$(command -v nvcc || true)"
if [ -z "$nvcc_bin" ]; then
    echo "gpu-check: nvcc not found (PATH and /usr/local/cuda/bin): install the CUDA toolkit" >&2
    exit 2
fi
arch_args=()
[ -n "${KVS_GPU_ARCH:-}" ] && arch_args=(-DCMAKE_CUDA_ARCHITECTURES="$KVS_GPU_ARCH")
step configure cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$nvcc_bin" "${arch_args[@]}"
step build cmake --build "$BUILD" -j "$(nproc)" --target kvscope_gpu_tests kvscope-cli
# A device that does not answer fails the tests (KVSCOPE_REQUIRE_GPU=1); no tests at all fails
# ctest (--no-tests=error).
export KVSCOPE_REQUIRE_GPU=1
# All 4 must run (scripts/ctest_checked.sh counts them), none skipped.
step gpu-tests bash -c "cd '$BUILD' && '$ROOT/scripts/ctest_checked.sh' 4 0 -L gpu --output-on-failure -V"
step cli-cuda "$BUILD/cli/kvscope-cli" generate --backend cuda --prompt "Once upon a time" \
    --max-new-tokens 32
step cli-cuda-sync env KVSCOPE_CUDA_SYNC=1 "$BUILD/cli/kvscope-cli" generate --backend cuda \
    --prompt "Once upon a time" --max-new-tokens 8

sanitizer="$(command -v compute-sanitizer || true)"
if [ -n "$sanitizer" ]; then
    # Small shapes keep the slow tools short: the op-by-op test only.
    for tool in memcheck racecheck synccheck initcheck; do
        step "sanitizer-$tool" "$sanitizer" --tool "$tool" --error-exitcode 1 \
            "$BUILD/tests/kvscope_gpu_tests" "every CUDA op on the device matches the CPU backend"
    done
else
    results+=("compute-sanitizer: not in this toolkit, not run")
fi

{
    echo "---- kvscope gpu-check report (paste this) ----"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nvcc: $("$nvcc_bin" --version | tail -n 2 | head -n 1)"
    if command -v nvidia-smi >/dev/null; then
        echo "nvidia-smi: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
            --format=csv,noheader 2>&1 | head -n 4 | tr '\n' ';')"
    else
        echo "nvidia-smi: not found"
    fi
    grep -h -m1 -E 'kvscope: CUDA' "$LOG/configure.log" || true
    grep -h -E '^(device|model|  )' "$LOG/gpu-tests.log" | head -n 20 || true
    grep -h -m1 'backend' "$LOG/cli-cuda.log" || true
    printf '%s\n' "${results[@]}"
    echo "overall: $([ "$status" = 0 ] && echo PASSED || echo FAILED)"
} | tee "$LOG/report.txt"
exit "$status"
