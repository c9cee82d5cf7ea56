#!/usr/bin/env bash
# No product function (core, kernels, lessonlib, cmdline, cli, gui, web) is longer than 150 lines,
# from the first line of its signature to its closing brace; data tables named *_strings are not
# functions a reader walks and are left out. A brace-counting scan of the C++ and CUDA as this tree
# writes it (clang-format's layout): comments, string and character literals are blanked first; a
# '{' whose text since the last ';', '{' or '}' ends in ')' (then const, noexcept, override, a
# trailing return type) opens a function body unless it follows if/for/while/switch/catch; a body's
# own lambdas and blocks count toward the function that holds them. Prints each long function as
# FILE:LINE and exits 1.
#
# PENDING, the window's long functions, to be split with gui/'s rooms: each is allowed while it is
# on this list and still long; once split, its line must go (a stale line fails too), and the list
# ends empty.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
limit="${2:-150}"
pending=(
    "gui/app.cpp App::handle_keys"
    "gui/panel_attention.cpp main_heatmap"
    "gui/panel_attention.cpp draw_attention"
    "gui/panel_inside_attention.cpp draw_at"
    "gui/panel_lesson.cpp draw_lesson"
    "gui/panel_time.cpp draw_time"
    "gui/plot.cpp draw_plot"
    "gui/stage_layout.cpp arrange"
    "gui/window_main.cpp run"
)
folders=(core kernels lessonlib cmdline cli gui web)
cd "$root" || exit 1
mapfile -t files < <(find "${folders[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \
    -o -name '*.cuh' \) | sort)
[ "${#files[@]}" -gt 0 ] || { echo "function_length: no C++ files under ${folders[*]}"; exit 1; }
long="$(awk -v limit="$limit" '
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
                if (len > limit && name !~ /_strings$/) print FILENAME, start, name, len
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
' "${files[@]}")"
status=0
while read -r file line name len; do
    [ -n "$file" ] || continue
    if printf '%s\n' "${pending[@]}" | grep -qxF "$file $name"; then continue; fi
    echo "$file:$line: $name is $len lines (at most $limit)"
    status=1
done <<<"$long"
for p in "${pending[@]}"; do
    if ! printf '%s\n' "$long" | awk '{ print $1, $3 }' | grep -qxF "$p"; then
        echo "function_length: '$p' is no longer over $limit lines: take it off the pending list"
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "function_length: every function in ${folders[*]} (${#files[@]} files) is at most $limit lines, but the ${#pending[@]} of gui/ pending"
exit "$status"
