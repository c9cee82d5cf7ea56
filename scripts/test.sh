#!/usr/bin/env bash
# Build kvscope and its tests (installing what is missing) and run the whole suite.
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}"
# Before building: the run.c reference data must be there (else its tests would silently not be
# built), and every C/C++ file must match .clang-format.
"$KVS_ROOT/scripts/check_shared.sh"
"$KVS_ROOT/scripts/check_format.sh"
kvs_build "$KVS_ROOT/build"
cd "$KVS_ROOT/build"
# At least 300 tests must run (432 are registered at the time of writing; a build whose test
# discovery broke registers a few design tests only); up to 30 may report themselves skipped (the
# gpu tests without a device, the web tests without emscripten's site, the peer tests before peer.sh
# installs llama.cpp: 20 on a machine with none of them).
kvs_ctest 300 30 --output-on-failure -j "$(nproc)"
# Against llama.cpp: installs npm's node-llama-cpp under build/peer the first time
# (measured 24-43 s with the registry reachable), builds and runs the peer test (ctest -L peer).
"$KVS_ROOT/scripts/peer.sh"
# Reliability (docs/reliability.md): the suite again under ASan + UBSan, then each fuzzer for a
# fixed number of inputs from a fixed seed (the same answer for the same code).
"$KVS_ROOT/scripts/sanitize.sh"
# The kernels' .cu files on the CPU shim under ThreadSanitizer, and the racy kernel it must catch.
"$KVS_ROOT/scripts/tsan-shim.sh"
"$KVS_ROOT/scripts/fuzz.sh"
