#!/usr/bin/env bash
# Build kvscope and its tests (installing what is missing) and run the whole suite.
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}"
# Each step's wall time at the end, so the whole run's length can be read step by step.
times=()
step() {
    local name="$1" t0=$SECONDS
    shift
    "$@"
    times+=("$name $((SECONDS - t0)) s")
}
# Before building: the run.c reference data must be there (else its tests would silently not be
# built), and every C/C++ file must match .clang-format.
step "shared data check" "$KVS_ROOT/scripts/check_shared.sh"
step "format check" "$KVS_ROOT/scripts/check_format.sh"
step build kvs_build "$KVS_ROOT/build"
cd "$KVS_ROOT/build"
# At least 300 tests must run (432 are registered at the time of writing; a build whose test
# discovery broke registers a few design tests only); up to 30 may report themselves skipped (the
# gpu tests without a device, the web tests without emscripten's site, the peer tests before peer.sh
# installs llama.cpp: 20 on a machine with none of them).
step tests kvs_ctest 300 30 --output-on-failure -j "$(nproc)"
# Against llama.cpp: installs npm's node-llama-cpp under build/peer the first time
# (measured 24-43 s with the registry reachable), builds and runs the peer test (ctest -L peer).
step "peer (llama.cpp)" "$KVS_ROOT/scripts/peer.sh"
# Reliability (docs/reliability.md): the suite again under ASan + UBSan, then each fuzzer for a
# fixed number of inputs from a fixed seed (the same answer for the same code).
step "ASan + UBSan suite" "$KVS_ROOT/scripts/sanitize.sh"
# The kernels' .cu files on the CPU shim under ThreadSanitizer, and the racy kernel it must catch.
step "TSan shim" "$KVS_ROOT/scripts/tsan-shim.sh"
step fuzz "$KVS_ROOT/scripts/fuzz.sh"
echo "kvscope: the whole run took $SECONDS s:" >&2
printf '  %s\n' "${times[@]}" >&2
