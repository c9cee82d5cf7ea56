#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz/ (docs/reliability.md), built with clang into build-fuzz/
# with AddressSanitizer and UndefinedBehaviorSanitizer (cmake/kvscope_sanitize.cmake: a UB finding
# aborts like a memory error; checked below in each binary), as many at once as there are cores.
#
#   scripts/fuzz.sh                     the check (run by scripts/test.sh): the same answer for
#                                       the same code. Each target starts from its committed corpus
#                                       tests/fuzz/corpus/<target>/ (every input that once failed is
#                                       kept there) and runs a fixed number of inputs from a fixed
#                                       seed (the table below).
#   scripts/fuzz.sh --explore [SECONDS] [TARGET...]
#                                       exploratory fuzzing: a fresh random seed and SECONDS per
#                                       target (default 60), from the same corpus. Each input that
#                                       fails is copied into tests/fuzz/corpus/<target>/ as
#                                       found-<hash> (fix the cause and commit it: the check then
#                                       replays it on every run); new inputs that reach code the
#                                       corpus did not are merged into build-fuzz/corpus-new/<target>/
#                                       (copy the ones worth keeping into the corpus).
#
# A crash, sanitizer finding, leak, slow input (10 s), a process over 2 GiB, or a target that did
# not run (not built, or no input executed) fails the script; the input that did it is kept as
# build-fuzz/artifacts/<target>-crash-* (reproduce: build-fuzz/tests/fuzz/<target> FILE).
#
# What makes the check reproducible: libFuzzer's -seed and -runs instead of a time limit; the corpus
# given as a sorted list of files (-seed_inputs: a folder's order is the file system's); no output
# folder (nothing is reloaded, nothing written back); address space layout randomisation off
# (setarch -R); the same command line and environment bytes on every start (run from build-fuzz/
# with relative paths under `env -i`; and the build leaves out libFuzzer's stack-depth feature,
# cmake/kvscope_sanitize.cmake: measured, fuzz_lesson_expr's features changed with the length of one
# environment variable, 2399 or 2454 at 60,000 runs); no mutation from compared values (-use_cmp=0:
# libFuzzer's table of the values a comparison saw holds heap pointers, which it writes into inputs,
# and where the heap puts a chunk follows every allocation before it: a path's length on the command
# line, the source path a newly covered function is printed with; measured, fuzz_lesson ended at ft
# 5250 and 5665 in two runs of one commit, 5760 with longer paths; with it, 5886 whatever the paths
# and environment); the engine's memory budget and SIMD path fixed (KVSCOPE_MEM_AVAILABLE: the
# budget is read from /proc/meminfo otherwise; the build has one SIMD path, where another would be
# chosen by the CPU). Each target prints its coverage, features and corpus size at the end: two runs
# of one commit print the same lines.
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}"
start=$SECONDS
dir="$KVS_ROOT/build-fuzz"
explore=0
seconds=60
only=()
if [ "${1:-}" = "--explore" ]; then
    explore=1
    shift
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
        seconds="$1"
        shift
    fi
    only=("$@")
elif [ $# -gt 0 ]; then
    echo "usage: scripts/fuzz.sh [--explore [SECONDS] [TARGET...]]" >&2
    exit 2
fi
# Configured every time with these options (setup.sh's kvs_configure explains why).
# One portable SIMD path (kernels/CMakeLists.txt): the inputs exercise the readers, and the path a
# run takes is then fixed by the build.
kvs_configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DKVSCOPE_FUZZ=ON -DKVSCOPE_GUI=OFF -DKVSCOPE_TESTS=OFF -DCMAKE_CUDA_COMPILER=OFF \
    -DKVSCOPE_ONE_SIMD_PATH=ON
cmake --build "$dir" -j "$(nproc)" --target kvscope_fuzzers >&2
built=$SECONDS
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# The engine's memory budget, fixed (see the top); the build's one SIMD path, whatever the caller
# asked for (the check runs under env -i anyway; --explore inherits the caller's environment).
export KVSCOPE_MEM_AVAILABLE=4294967296
unset KVSCOPE_ISA

# target:max_len:runs. Inputs are capped so a run explores shapes, not sizes. The runs give each
# target about 20 s of one core (eleven targets, two at a time on two cores: about 2 min in all,
# as the 22 s time-limited runs took): measured in CPU seconds (user + sys of /usr/bin/time, which
# a loaded machine does not inflate as it does wall time) with these options, and scaled.
targets=(checkpoint:8192:190000 tokenizer_parse:8192:330000 tokenizer_encode:4096:230000
         lesson:4096:90000 lesson_expr:512:560000 font:8192:4000000 settings:4096:135000
         gguf:40000:35000 hf:40000:25000 trace:40000:28000 tokenizer_json:8192:95000)
seed="${KVS_FUZZ_SEED:-1}"
if [ "${#only[@]}" -gt 0 ]; then
    picked=()
    for t in "${only[@]}"; do
        spec=$(printf '%s\n' "${targets[@]}" | grep "^$t:" || true)
        [ -n "$spec" ] || { echo "kvscope: no fuzz target '$t'" >&2; exit 2; }
        picked+=("$spec")
    done
    targets=("${picked[@]}")
fi
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
# Without layout randomisation where the system allows it (a container may refuse the call).
fixed_layout=(setarch "$(uname -m)" -R)
if ! "${fixed_layout[@]}" true 2>/dev/null; then
    fixed_layout=()
    [ "$explore" = 1 ] ||
        echo "kvscope: setarch -R is refused here: inputs may differ from run to run after the corpus" >&2
fi
rm -rf "$dir/artifacts"
mkdir -p "$dir/artifacts"
# The check's process sees the same bytes wherever the clone is and however the script was
# started: run from build-fuzz/ with paths relative to it, and an environment of only these.
fixed_env=(PATH=/usr/bin:/bin "ASAN_OPTIONS=$ASAN_OPTIONS" "UBSAN_OPTIONS=$UBSAN_OPTIONS"
           "KVSCOPE_MEM_AVAILABLE=$KVSCOPE_MEM_AVAILABLE")
symbolizer=$(command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && fixed_env+=("ASAN_SYMBOLIZER_PATH=$symbolizer")
run_one() {
    local t="$1" len="$2" runs="$3" corpus="$KVS_ROOT/tests/fuzz/corpus/$1"
    local common=(-max_len="$len" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
                  -artifact_prefix="artifacts/$t-")
    if [ "$explore" = 1 ]; then
        rm -rf "$dir/explore/$t"
        mkdir -p "$dir/explore/$t"
        (cd "$dir" && "./tests/fuzz/fuzz_$t" "${common[@]}" -max_total_time="$seconds" \
            "explore/$t" "$corpus") >"$dir/fuzz_$t.log" 2>&1
    else
        # Names are ours (tests/fuzz/make_*.py, found-*): no comma, which would split the list.
        (cd "$corpus" && LC_ALL=C ls -1 | sed "s|^|../tests/fuzz/corpus/$t/|" | paste -sd, -) \
            >"$dir/seeds_$t.txt"
        (cd "$dir" && "${fixed_layout[@]}" env -i "${fixed_env[@]}" "./tests/fuzz/fuzz_$t" \
            "${common[@]}" -seed="$seed" -runs="$runs" -reload=0 -use_cmp=0 \
            -seed_inputs=@"seeds_$t.txt") >"$dir/fuzz_$t.log" 2>&1
    fi
}
# The end of a run as two runs of one commit print it alike: no times, no speeds.
summary() {
    local log="$dir/fuzz_$1.log"
    echo "$(grep -m1 -o 'Done [0-9]* runs' "$log")," \
        "$(grep -o 'DONE *cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | sed 's/DONE *//')"
}
keep_finding() {  # copy what failed into the corpus, named by its content
    local t="$1" f sum
    for f in "$dir/artifacts/$t-"*; do
        [ -f "$f" ] || continue
        sum=$(sha1sum "$f" | cut -c1-16)
        cp "$f" "$KVS_ROOT/tests/fuzz/corpus/$t/found-$sum"
        echo "kvscope: kept $(basename "$f") as tests/fuzz/corpus/$t/found-$sum" >&2
    done
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
            echo "kvscope: fuzz_$t: $(summary "$t"), no finding ($(grep -m1 -o \
                'in [0-9]* second(s)' "$dir/fuzz_$t.log" | sed 's/in //; s/ second(s)/ s/'))" >&2
        fi
    else
        failed+=("$t")
        echo "kvscope: fuzz_$t FAILED; the end of build-fuzz/fuzz_$t.log:" >&2
        tail -n 40 "$dir/fuzz_$t.log" >&2
        [ "$explore" = 1 ] && keep_finding "$t"
    fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
}
for spec in "${targets[@]}"; do
    [ "${#pids[@]}" -ge "$(nproc)" ] && finish_one
    IFS=: read -r t len runs <<<"$spec"
    run_one "$t" "$len" "$runs" &
    pids+=($!)
    names+=("$t")
done
while [ "${#pids[@]}" -gt 0 ]; do finish_one; done
if [ "$explore" = 1 ]; then
    # What reached new code: libFuzzer's merge into a copy of the committed corpus adds only the
    # inputs that cover something it does not.
    for spec in "${targets[@]}"; do
        IFS=: read -r t len runs <<<"$spec"
        corpus="$KVS_ROOT/tests/fuzz/corpus/$t"
        rm -rf "$dir/merge-tmp" "$dir/corpus-new/$t"
        mkdir -p "$dir/merge-tmp" "$dir/corpus-new/$t"
        cp "$corpus/"* "$dir/merge-tmp/"
        "$dir/tests/fuzz/fuzz_$t" -merge=1 -max_len="$len" "$dir/merge-tmp" "$dir/explore/$t" \
            >"$dir/merge_$t.log" 2>&1 || true
        for f in "$dir/merge-tmp/"*; do
            [ -e "$corpus/$(basename "$f")" ] || mv "$f" "$dir/corpus-new/$t/"
        done
        echo "kvscope: fuzz_$t: $(ls "$dir/corpus-new/$t" | wc -l) inputs reach code the corpus" \
            "does not: build-fuzz/corpus-new/$t/" >&2
    done
    rm -rf "$dir/merge-tmp"
    echo "kvscope: explored ${seconds} s per target in $((SECONDS - built)) s (seeds: in build-fuzz/fuzz_*.log, 'INFO: Seed:')" >&2
else
    echo "kvscope: fuzzers built in $((built - start)) s, ran in $((SECONDS - built)) s (seed $seed)" >&2
fi
if [ "${#failed[@]}" -eq 0 ] && [ "$ran" -ne "${#targets[@]}" ]; then
    echo "kvscope: only $ran of ${#targets[@]} fuzz targets ran" >&2
    exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
    echo "kvscope: fuzzing found problems in: ${failed[*]} (inputs in build-fuzz/artifacts/)" >&2
    exit 1
fi
