#!/usr/bin/env bash
# The CUDA kernels' own .cu files on the CPU shim (kernels/shim/: one OS thread per CUDA thread, a
# real barrier for __syncthreads) under ThreadSanitizer, into build-tsan/. Two checks:
#   1. the real kernels, over small shapes, give the emulator's bits with no race reported;
#   2. the deliberately racy kernel of tests/shim/racy_max.cuh (a shared maximum updated without
#      atomics), which passes the phase-by-phase emulator in both thread orders, IS reported as a
#      data race, and its atomic twin is not. A detector that stopped seeing races fails here.
# Only the two shim programs (and the engine they link) are built: about a minute on 2 cores.
# Run by scripts/test.sh; the same tests run under ASan + UBSan in scripts/sanitize.sh.
source "$(dirname "$0")/setup.sh"
start=$SECONDS
dir="$KVS_ROOT/build-tsan"
# Configured every time with these options (setup.sh's kvs_configure explains why).
kvs_configure "$dir" -DCMAKE_CUDA_COMPILER=OFF \
    -DKVSCOPE_GUI=OFF -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g" \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread"
cmake --build "$dir" -j "$(nproc)" --target kvscope_shim_tests kvscope_shim_race >&2
export TSAN_OPTIONS="second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
log="$dir/tsan-shim.log"

echo "kvscope: the kernels on the shim under ThreadSanitizer" >&2
# -w NoTests: a test binary that ran no test fails (exit 2) instead of passing.
"$dir/tests/kvscope_shim_tests" -w NoTests >&2

echo "kvscope: the atomic maximum on the shim under ThreadSanitizer (must be clean)" >&2
"$dir/tests/kvscope_shim_race" atomic >&2

echo "kvscope: the racy maximum on the shim under ThreadSanitizer (must be reported)" >&2
# ThreadSanitizer sees the race only when two threads' unordered accesses both land in its shadow
# history; on a machine loaded enough that the OS runs the 64 threads one after another through
# the shim's barrier, one run can miss it. Up to 5 runs: a detector that stopped seeing races
# misses all 5.
reported=0
for attempt in 1 2 3 4 5; do
    set +e
    "$dir/tests/kvscope_shim_race" racy >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" -ne 0 ] && grep -q "WARNING: ThreadSanitizer: data race" "$log" &&
        grep -q "racy_max_update" "$log"; then
        reported=1
        break
    fi
    echo "kvscope: run $attempt of the racy maximum: no report (exit $rc)" >&2
done
if [ "$reported" -eq 0 ]; then
    cat "$log" >&2
    echo "kvscope: FAILED: ThreadSanitizer did not report the race in racy_max_update (exit $rc)" >&2
    exit 1
fi
echo "kvscope: as expected, ThreadSanitizer reports the racy maximum:" >&2
grep -m1 -A4 "WARNING: ThreadSanitizer: data race" "$log" >&2
echo "kvscope: shim + ThreadSanitizer checks passed in $((SECONDS - start)) s" >&2
