#!/usr/bin/env bash
# ctest in the current build folder, failing when it ran no test or fewer than expected: every
# test entry point (test.sh, sanitize.sh, peer.sh, web.sh --test, gpu-check.sh) runs its tests
# through this, so none can pass by running nothing ("No tests were found!!!" exits 0 otherwise).
#   scripts/ctest_checked.sh MIN_RAN MAX_SKIPPED [ctest arguments...]
# MIN_RAN: tests that must have run (passed or failed, not skipped); MAX_SKIPPED: how many may
# report themselves skipped (no GPU, no llama.cpp). KVS_CTEST_SHOW=REGEX prints only the lines of
# ctest's output that match (the whole output is kept in ctest-checked.log here either way).
set -uo pipefail
min_ran="$1"
max_skipped="$2"
shift 2
log="$PWD/ctest-checked.log"
if [ -n "${KVS_CTEST_SHOW:-}" ]; then
    ctest --no-tests=error "$@" >"$log" 2>&1
    rc=$?
    grep -E "$KVS_CTEST_SHOW" "$log"
else
    ctest --no-tests=error "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
fi
# "100% tests passed, 0 tests failed out of 372", then the skipped ones under "The following
# tests did not run:", one "(Skipped)" line each.
total=$(sed -n 's/.* tests failed out of \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
skipped=$(sed -n '/The following tests did not run:/,/^$/p' "$log" | grep -c '(Skipped)')
ran=$((${total:-0} - skipped))
if [ "$rc" -ne 0 ]; then
    echo "kvscope: ctest $* failed (exit $rc; $ran ran, $skipped skipped; log: $log)" >&2
    exit "$rc"
fi
if [ "$ran" -lt "$min_ran" ] || [ "$skipped" -gt "$max_skipped" ]; then
    echo "kvscope: ctest $*: $ran tests ran and $skipped were skipped; at least $min_ran must" \
        "run and at most $max_skipped may be skipped (log: $log)" >&2
    exit 1
fi
echo "kvscope: ctest $*: $ran tests ran, $skipped skipped" >&2
