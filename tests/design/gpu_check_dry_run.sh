#!/usr/bin/env bash
# scripts/gpu-check.sh --dry-run: every step it would run on a GPU machine, in value order (build;
# correctness; the decode timings; the 85M model; the peer; then the sanitizers), each with its
# command and limit, the limits adding up to at most 420 s; --rehearse --dry-run: the same steps
# with the cuda steps on cuda-emulated and no compute-sanitizer; docs/gpu/README.md: the same
# steps and limits in the same order, what the device call carries, the time limit and where the
# report lands.
#   tests/design/gpu_check_dry_run.sh SOURCE_DIR
set -uo pipefail
root="$1"
out="$(bash "$root/scripts/gpu-check.sh" --dry-run 2>&1)" || { echo "$out"; exit 1; }
rehearsal="$(bash "$root/scripts/gpu-check.sh" --rehearse --dry-run 2>&1)" || { echo "$rehearsal"; exit 1; }
readme="$root/docs/gpu/README.md"
fail=0
say() {
    echo "gpu-check --dry-run: $*"
    fail=1
}
order="probe deps configure build gpu-tests text paths model-85M speed-85M peer kernels sync sanitizer-memcheck sanitizer-racecheck sanitizer-initcheck sanitizer-synccheck"
listed="$(sed -n 's/^\([A-Za-z0-9-]*\) *(at most .*/\1/p' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
[ "$listed" = "$order" ] || say "steps '$listed', want '$order' (value order)"
for want in "^probe .*nvcc.*driver.*compute-sanitizer.*torch" "^configure .*-DKVSCOPE_GUI=OFF" \
    "^build .*kvscope_gpu_tests" "^gpu-tests .*KVSCOPE_REQUIRE_GPU=1" \
    "^text .*--backend cpu.*--backend cuda .*gpu_compare.py' text" \
    "^paths .*CUDA_MODULE_LOADING=EAGER.*--op-times" "^kernels .*--require-gpu" \
    "^sync .*KVSCOPE_CUDA_SYNC=1" "^sanitizer-memcheck .*--tool memcheck.*KVSCOPE_CUDA_GATE=0" \
    "^sanitizer-racecheck .*--tool racecheck" "^sanitizer-initcheck .*--tool initcheck" \
    "^sanitizer-synccheck .*--tool synccheck" "^model-85M .*--shape 85M.*--hf" \
    "^speed-85M .*bf16" "^peer .*peer-kvs-85M.json.*gpu_peer.py' --hf .*m85/hf' --trace .*peer-kvs-85M.json' --device cuda"; do
    grep -qE -- "$want" <<<"$out" || say "no line matching '$want'"
done
total="$(sed -n 's/.*the limits add up to \([0-9]*\) s.*/\1/p' <<<"$out")"
[ -n "$total" ] && [ "$total" -le 420 ] || say "the limits add up to '${total:-?}' s, more than 420"
# The rehearsal: the same steps; nothing on a device, nothing under compute-sanitizer.
rlisted="$(sed -n 's/^\([A-Za-z0-9-]*\) *(at most .*/\1/p' <<<"$rehearsal" | tr '\n' ' ' | sed 's/ $//')"
[ "$rlisted" = "$order" ] || say "the rehearsal's steps are '$rlisted'"
grep -qE -- "--backend cuda( |$)" <<<"$rehearsal" && say "the rehearsal runs --backend cuda"
grep -qE -- "--tool [a-z]+ --target" <<<"$rehearsal" && say "the rehearsal runs compute-sanitizer"
for want in "^gpu-tests .*KVSCOPE_GPU_TESTS_BACKEND=cuda-emulated" "^text .*--backend cuda-emulated" \
    "^peer .*--device cpu" "^peer .*--rehearsal" "^configure .*CMAKE_IGNORE_PREFIX_PATH=/usr"; do
    grep -qE -- "$want" <<<"$rehearsal" || say "the rehearsal has no line matching '$want'"
done
# docs/gpu/README.md: the steps' table in the same order with the same limits.
table="$(sed -n 's/^| `\([A-Za-z0-9-]*\)` | \([0-9]*\) |.*/\1 \2/p' "$readme")"
want_table="$(sed -n 's/^\([A-Za-z0-9-]*\) *(at most *\([0-9]*\) s).*/\1 \2/p' <<<"$out")"
[ "$table" = "$want_table" ] || say "docs/gpu/README.md's step table is not the script's steps and limits:
$(diff <(echo "$want_table") <(echo "$table"))"
for want in 'carry.*gpu-deps' '420 s' '--out "\$OUT"' 'gpu-check.txt' 'gpu-check-logs.tar.gz' \
    'scripts/gpu-check.sh --rehearse'; do
    grep -qE -- "$want" "$readme" || say "docs/gpu/README.md does not say '$want'"
done
[ "$fail" = 0 ] && echo "gpu-check --dry-run: 16 steps in value order, the limits add up to $total s; the rehearsal and docs/gpu/README.md agree"
exit "$fail"
