#!/usr/bin/env bash
# scripts/gpu-check.sh --dry-run lists every step it would run on a GPU machine, each with its
# command: the GPU-only build (no window), the gpu tests with a device required, kernels
# --require-gpu, cpu against cuda, the four compute-sanitizer tools, the 85M model and the peer.
#   tests/gpu_check_dry_run.sh SOURCE_DIR
set -uo pipefail
out="$(bash "$1/scripts/gpu-check.sh" --dry-run 2>&1)" || { echo "$out"; exit 1; }
fail=0
for want in "^deps " "^configure .*-DKVSCOPE_GUI=OFF" "^build .*kvscope_gpu_tests" \
    "^gpu-tests .*KVSCOPE_REQUIRE_GPU=1" "^kernels .*--require-gpu" "^text .*cmp " \
    "^paths .*--op-times" "^sync .*KVSCOPE_CUDA_SYNC=1" "^sanitizer-memcheck " \
    "^sanitizer-racecheck " "^sanitizer-initcheck " "^sanitizer-synccheck " \
    "^model-85M .*--shape 85M.*--hf" "^speed-85M .*bf16" "^peer .*gpu_peer.py" \
    "^gpu-check: 15 steps"; do
    if ! grep -qE -- "$want" <<<"$out"; then
        echo "gpu-check --dry-run: no line matching '$want'"
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "gpu-check --dry-run lists its 15 steps"
exit "$fail"
