#!/usr/bin/env bash
# DESIGN.md's "Where each concept lives" stays true. It holds two tables, the concepts the
# tutorials teach ("### The concepts", about a dozen rows) and the engineering around them
# ("### The engineering"); both must be there, and in each, every row's function is defined in its
# file (a line naming it followed by "(" that is not a declaration ending in ";"). A row marked
# *pending* must NOT be defined yet: once it lands the mark has to go.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
design="$root/DESIGN.md"
section="$(sed -n '/^## Where each concept lives/,/^## [^W]/p' "$design")"
# The rows of the table under one "### " heading of the section.
table_rows() {
    printf '%s\n' "$section" | sed -n "/^### $1\$/,/^#/p" |
        grep -E '^\| [^-].*\| `[^`]+` \| `[^`]+` \|$'
}
fail=0 total=0
check_rows() {  # $1: the table's name; stdin: its rows
    local n=0 row file func pattern defined
    while IFS= read -r row; do
        [ -n "$row" ] || continue
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
            echo "DESIGN.md ($1) names $file:$func, which is not defined there"
            fail=1
        fi
    done
    if [ "$n" = 0 ]; then
        echo "DESIGN.md: no \"### $1\" table under \"Where each concept lives\""
        fail=1
    fi
    total=$((total + n))
    counts="${counts:-}${counts:+, }$n $1"
}
check_rows "The concepts" < <(table_rows "The concepts")
check_rows "The engineering" < <(table_rows "The engineering")
[ "$fail" = 0 ] && echo "DESIGN.md: $total rows checked ($counts)"
exit "$fail"
