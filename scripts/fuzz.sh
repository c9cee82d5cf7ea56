#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz/ (docs/reliability.md), built with clang into build-fuzz/
# with AddressSanitizer and UndefinedBehaviorSanitizer (cmake/kvscope_sanitize.cmake: a UB finding
# aborts like a memory error; checked below in each binary), and run for a bounded time each,
# starting from the committed seeds in tests/fuzz/corpus/<target>/; as many at once as there are
# cores. A crash, sanitizer finding, leak, slow input (10 s), a process over 2 GiB, or a target
# that did not run (not built, or no input executed) fails the script, and the input that did it
# is kept as build-fuzz/artifacts/<target>-crash-* (reproduce: build-fuzz/tests/fuzz/<target> FILE; fix the
# code and add the file to the target's corpus). New inputs found on the way go to
# build-fuzz/corpus-new/, never into the committed seeds. Run by scripts/test.sh.
#   KVS_FUZZ_SECONDS   seconds per target (default 22: eleven targets, two at a time, in six
#                      rounds of 22 s, 132 s, as ten targets took at 27 s in five rounds: the
#                      whole of scripts/test.sh must stay under CI's 30 minutes)
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}"
start=$SECONDS
dir="$KVS_ROOT/build-fuzz"
seconds="${KVS_FUZZ_SECONDS:-22}"
# Configured every time with these options (setup.sh's kvs_configure explains why).
kvs_configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DKVSCOPE_FUZZ=ON -DKVSCOPE_GUI=OFF -DKVSCOPE_TESTS=OFF -DCMAKE_CUDA_COMPILER=OFF
cmake --build "$dir" -j "$(nproc)" --target kvscope_fuzzers >&2
built=$SECONDS
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# target:max_len. Inputs are capped so a run explores shapes, not sizes.
targets=(checkpoint:8192 tokenizer_parse:8192 tokenizer_encode:4096 lesson:4096 lesson_expr:512
         font:8192 settings:4096 gguf:40000 hf:40000 trace:40000
         tokenizer_json:8192)
# Every target built, and with both sanitizers' runtime hooks in it.
for spec in "${targets[@]}"; do
    bin="$dir/tests/fuzz/fuzz_${spec%%:*}"
    if [ ! -x "$bin" ]; then
        echo "kvscope: $bin was not built" >&2
        exit 1
    fi
    for hook in __asan_report_load __ubsan_handle_; do
        [ "$(nm "$bin" | grep -c "$hook")" -gt 0 ] ||
            { echo "kvscope: $bin has no $hook* (built without that sanitizer)" >&2; exit 1; }
    done
done
mkdir -p "$dir/artifacts"
run_one() {
    local t="$1" len="$2"
    mkdir -p "$dir/corpus-new/$t"
    "$dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len="$len" -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
        "$dir/corpus-new/$t" "$KVS_ROOT/tests/fuzz/corpus/$t" >"$dir/fuzz_$t.log" 2>&1
}
failed=()
pids=()
names=()
ran=0
finish_one() {  # wait for the oldest running target, report it
    local t="${names[0]}" runs
    if wait "${pids[0]}"; then
        runs=$(grep -m1 -o 'Done [0-9]* runs' "$dir/fuzz_$t.log" | grep -o '[0-9]*' || true)
        if [ "${runs:-0}" -eq 0 ]; then  # no input executed: not a fuzz run at all
            failed+=("$t")
            echo "kvscope: fuzz_$t ran no input; the end of build-fuzz/fuzz_$t.log:" >&2
            tail -n 20 "$dir/fuzz_$t.log" >&2
        else
            ran=$((ran + 1))
            echo "kvscope: fuzz_$t: $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' \
                "$dir/fuzz_$t.log"), $(grep -o 'cov: [0-9]*' "$dir/fuzz_$t.log" | tail -1), no finding" >&2
        fi
    else
        failed+=("$t")
        echo "kvscope: fuzz_$t FAILED; the end of build-fuzz/fuzz_$t.log:" >&2
        tail -n 40 "$dir/fuzz_$t.log" >&2
    fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
}
for spec in "${targets[@]}"; do
    [ "${#pids[@]}" -ge "$(nproc)" ] && finish_one
    run_one "${spec%%:*}" "${spec##*:}" &
    pids+=($!)
    names+=("${spec%%:*}")
done
while [ "${#pids[@]}" -gt 0 ]; do finish_one; done
echo "kvscope: fuzzers built in $((built - start)) s, ran ${seconds} s each in $((SECONDS - built)) s" >&2
if [ "${#failed[@]}" -eq 0 ] && [ "$ran" -ne "${#targets[@]}" ]; then
    echo "kvscope: only $ran of ${#targets[@]} fuzz targets ran" >&2
    exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
    echo "kvscope: fuzzing found problems in: ${failed[*]} (inputs in build-fuzz/artifacts/)" >&2
    exit 1
fi
