#!/usr/bin/env bash
# The README stays a front page and the product speaks for itself:
#   1. README.md has at most 250 lines (the manual lives in docs/, linked from its table);
#   2. no file of the repository names an issue number (the word "issue", a space, maybe "#",
#      then digits, in any case): a reader cannot look one up, so code, comments, scripts, tests
#      and docs say what and why instead.
# Files searched: the tracked ones and untracked ones git does not ignore (so build folders and
# .git are never read); outside a git checkout, every file but .git and build*/.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
max_lines=250
fail=0

lines=$(wc -l <"$root/README.md")
if [ "$lines" -gt "$max_lines" ]; then
    echo "README.md: $lines lines, at most $max_lines: move the detail into docs/ and link it"
    fail=1
fi

pattern='issue #?[0-9]+'
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    hits=$(git -C "$root" grep --untracked -nIiE "$pattern" -- . 2>/dev/null)
else
    hits=$(cd "$root" && grep -rnIiE --exclude-dir=.git --exclude-dir='build*' "$pattern" . 2>/dev/null)
fi
if [ -n "$hits" ]; then
    n=$(printf '%s\n' "$hits" | wc -l)
    echo "$n lines name an issue number; say what the code does and why instead:"
    printf '%s\n' "$hits" | head -n 20
    [ "$n" -gt 20 ] && echo "... and $((n - 20)) more"
    fail=1
fi

[ "$fail" = 0 ] && echo "README.md: $lines lines (at most $max_lines); no issue numbers"
exit "$fail"
