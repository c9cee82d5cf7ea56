#!/usr/bin/env bash
# No product function (core, kernels, lessonlib, cmdline, cli, gui, web) is longer than 150 lines,
# from the first line of its signature to its closing brace; data tables named *_strings are not
# functions a reader walks and are left out. A brace-counting scan of the C++ and CUDA as this tree
# writes it (clang-format's layout): comments, string and character literals are blanked first; a
# '{' whose text since the last ';', '{' or '}' ends in ')' (then const, noexcept, override, a
# trailing return type) opens a function body unless it follows if/for/while/switch/catch; a body's
# own lambdas and blocks count toward the function that holds them. Prints each long function as
# FILE:LINE and exits 1.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
limit="${2:-150}"
folders=(core kernels lessonlib cmdline cli gui web)
cd "$root" || exit 1
mapfile -t files < <(find "${folders[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \
    -o -name '*.cuh' \) | sort)
[ "${#files[@]}" -gt 0 ] || { echo "function_length: no C++ files under ${folders[*]}"; exit 1; }
awk -v limit="$limit" '
FNR == 1 { in_block = 0; depth = 0; body = -1; head = ""; head_line = 0 }
{
    line = $0
    # Blank block comments (possibly spanning lines), line comments, strings and characters.
    out = ""
    i = 1
    n = length(line)
    while (i <= n) {
        c = substr(line, i, 1)
        if (in_block) {
            if (substr(line, i, 2) == "*/") { in_block = 0; i += 2 } else i++
            continue
        }
        two = substr(line, i, 2)
        if (two == "/*") { in_block = 1; i += 2; continue }
        if (two == "//") break
        if (c == "\"" || c == "\x27") {
            q = c
            i++
            while (i <= n && substr(line, i, 1) != q) i += (substr(line, i, 1) == "\\") ? 2 : 1
            i++
            out = out q q
            continue
        }
        out = out c
        i++
    }
    if (out ~ /^[ \t]*#/) next
    n = length(out)
    for (i = 1; i <= n; i++) {
        c = substr(out, i, 1)
        if (c == "{") {
            if (body < 0) {
                h = head
                gsub(/[ \t]+$/, "", h)
                sub(/[ \t]*(->[^;{}()]*)?$/, "", h)
                while (h ~ /[ \t](const|noexcept|override|final|mutable)$/) sub(/[ \t]+[a-z]+$/, "", h)
                if (h ~ /\)$/ && h !~ /^[ \t]*(if|for|while|switch|catch|else if)[ \t(]/) {
                    body = depth
                    start = head_line
                    name = h
                    sub(/\(.*$/, "", name)
                    sub(/^.*[^A-Za-z0-9_:~]/, "", name)
                }
            }
            depth++
            head = ""
            head_line = 0
        } else if (c == "}") {
            depth--
            if (body >= 0 && depth == body) {
                len = FNR - start + 1
                if (len > limit && name !~ /_strings$/) {
                    printf "%s:%d: %s is %d lines (at most %d)\n", FILENAME, start, name, len, limit
                    bad = 1
                }
                body = -1
            }
            head = ""
            head_line = 0
        } else if (c == ";") {
            head = ""
            head_line = 0
        } else {
            if (head_line == 0 && c !~ /[ \t]/) head_line = FNR
            if (head_line) head = head c
        }
    }
    if (head_line) head = head " "
}
END { exit bad ? 1 : 0 }
' "${files[@]}"
status=$?
[ "$status" -eq 0 ] && echo "function_length: every function in ${folders[*]} (${#files[@]} files) is at most $limit lines"
exit "$status"
