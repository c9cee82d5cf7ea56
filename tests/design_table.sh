#!/usr/bin/env bash
# DESIGN.md's "Where each concept lives" table stays true: each row's function is defined in its
# file (a line naming it followed by "(" that is not a declaration ending in ";"). A row marked
# *pending* must NOT be defined yet: once it lands the mark has to go.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
design="$root/DESIGN.md"
section="$(sed -n '/^## Where each concept lives/,/^## /p' "$design")"
rows="$(printf '%s\n' "$section" | grep -E '^\| [^-].*\| `[^`]+` \| `[^`]+` \|$' | grep -v '^| concept')"
[ -n "$rows" ] || { echo "DESIGN.md: no concept table found"; exit 1; }
fail=0 n=0
while IFS= read -r row; do
    file="$(printf '%s' "$row" | awk -F'|' '{print $3}' | tr -d ' `')"
    func="$(printf '%s' "$row" | awk -F'|' '{print $4}' | tr -d ' `')"
    n=$((n + 1))
    pattern="(^|[^A-Za-z0-9_:])${func}[[:space:]]*\("
    defined=no
    if [ -f "$root/$file" ] &&
        grep -E "$pattern" "$root/$file" | grep -qvE ';[[:space:]]*(//.*)?$'; then
        defined=yes
    fi
    if printf '%s' "$row" | grep -q '\*pending\*'; then
        if [ "$defined" = yes ]; then
            echo "DESIGN.md: $file defines $func now: take the *pending* mark off its row"
            fail=1
        fi
    elif [ "$defined" = no ]; then
        echo "DESIGN.md names $file:$func, which is not defined there"
        fail=1
    fi
done <<<"$rows"
[ "$fail" = 0 ] && echo "DESIGN.md: $n concept rows checked"
exit "$fail"
