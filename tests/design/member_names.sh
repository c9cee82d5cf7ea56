#!/usr/bin/env bash
# No product name is one letter and an underscore (a member such as c_ or W_ says nothing of what
# it holds): every identifier matching [A-Za-z]_ in core, kernels, lessonlib, cmdline, cli, gui and
# web, line comments and string literals left out, is reported as FILE:LINE NAME and the script
# exits 1.
#
# ALLOWED (a file pattern and a name): the forward pass's activations keep run.c's RunState names
# (x, q, k, v), so the pass reads beside run.c.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
allowed=(
    "core/model/transformer_runner* x_"
    "core/model/transformer_runner* q_"
    "core/model/transformer_runner* k_"
    "core/model/transformer_runner* v_"
)
folders=(core kernels lessonlib cmdline cli gui web)
cd "$root" || exit 1
mapfile -t files < <(find "${folders[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \
    -o -name '*.cuh' \) | sort)
[ "${#files[@]}" -gt 0 ] || { echo "member_names: no C++ files under ${folders[*]}"; exit 1; }
# FILE:LINE NAME for each one-letter name, comments and string literals blanked first.
found="$(awk '
{
    line = $0
    gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
    sub(/\/\/.*/, "", line)
    rest = line
    while (match(rest, /(^|[^A-Za-z0-9_])[A-Za-z]_([^A-Za-z0-9_]|$)/)) {
        hit = substr(rest, RSTART, RLENGTH)
        gsub(/[^A-Za-z_]/, "", hit)
        sub(/^_*/, "", hit)
        print FILENAME ":" FNR " " substr(hit, 1, 2)
        rest = substr(rest, RSTART + RLENGTH - 1)
    }
}' "${files[@]}")"
status=0
while read -r at name; do
    [ -n "$at" ] || continue
    key="${at%%:*} $name"
    for e in "${allowed[@]}"; do
        # shellcheck disable=SC2053  # the entry's file part is a pattern
        [[ "$key" == ${e% *}" ${e##* }" ]] && continue 2
    done
    echo "member_names: $at: '$name' is one letter; name what it holds"
    status=1
done <<<"$found"
[ "$status" -eq 0 ] && echo "member_names: no one-letter names in ${folders[*]}"
exit "$status"
