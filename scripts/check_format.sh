#!/usr/bin/env bash
# Every C/C++/CUDA file of the tree against the repo's .clang-format (clang-format --dry-run
# -Werror). Prints the files that differ and how to fix them; exit 1 if any does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
    mapfile -t files < <(find . -path './build*' -prune -o -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \
           -o -name '*.cuh' \) -print | sed 's|^\./||' | sort)
fi
# One clang-format process for the whole tree; its diagnostics start with "FILE:LINE:COL: error".
mapfile -t bad < <(clang-format --dry-run -Werror "${files[@]}" 2>&1 |
                   sed -n 's/^\([^ :]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [ "${#bad[@]}" -gt 0 ]; then
    echo "kvscope: ${#bad[@]} of ${#files[@]} files differ from .clang-format: ${bad[*]}" >&2
    echo "kvscope: fix with:  clang-format -i ${bad[*]}" >&2
    exit 1
fi
echo "kvscope: ${#files[@]} C/C++ files match .clang-format"
