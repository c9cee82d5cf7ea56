#!/usr/bin/env bash
# The tree layers as DESIGN.md's "Rooms" says, read from its two order lines:
#   folders:    core → kernels lessonlib → ...     (groups of folders, lowest first)
#   core rooms: util → files → ...                 (core/'s rooms, lowest first)
# Every #include of a folder in the order names its own folder or one in an earlier group (never
# one beside it or after it, never tests/ or tools/); every #include in a room of core/ names its
# own room or an earlier one; neither the folders, nor the rooms, nor the header files include one
# another in a circle. Also: core/ is rooms (at most 4 files at its top, at least 4 rooms, each in
# the order) linked only downward in CMake, knows no ImGui, GLFW or CUDA, and holds no lesson file;
# the window's engine worker uses none of the window's words.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
design="$root/DESIGN.md"
fail=0
cd "$root" || exit 1

folders_line="$(grep -m1 '^folders:' "$design" | sed 's/^folders://')"
rooms_line="$(grep -m1 '^core rooms:' "$design" | sed 's/^core rooms://')"
if [ -z "$folders_line" ] || [ -z "$rooms_line" ]; then
    echo "DESIGN.md: no 'folders:' or 'core rooms:' order line"
    exit 1
fi
# "a → b c → d" as lines "name rank".
ranks() { printf '%s\n' "$1" | sed 's/→/\n/g' | awk 'NF { for (i = 1; i <= NF; i++) print $i, NR - 1 }'; }
folder_ranks="$(ranks "$folders_line")"
room_ranks="$(ranks "$rooms_line")"
for list in "$folder_ranks" "$room_ranks"; do
    dup="$(printf '%s\n' "$list" | awk '{print $1}' | sort | uniq -d)"
    [ -z "$dup" ] || { echo "DESIGN.md: $dup named twice in an order line"; fail=1; }
done

# core/ is rooms: each a folder named in the order, at least 4 of them, at most 4 files at its top.
n_rooms=0
while read -r room _; do
    if [ -d "core/$room" ]; then n_rooms=$((n_rooms + 1)); else
        echo "DESIGN.md names core room '$room', which is not a folder of core/"
        fail=1
    fi
done <<<"$room_ranks"
for d in core/*/; do
    d="${d%/}"
    if ! grep -q "^${d#core/} " <<<"$room_ranks"; then
        echo "$d/ is not in DESIGN.md's core room order"
        fail=1
    fi
done
[ "$n_rooms" -ge 4 ] || { echo "core/ has $n_rooms rooms (at least 4 expected)"; fail=1; }
top_files="$(find core -maxdepth 1 -type f | sort)"
if [ "$(printf '%s' "$top_files" | grep -c .)" -gt 4 ]; then
    echo "core/ holds more than 4 files at its top (they belong in its rooms):"
    printf '%s\n' "$top_files"
    fail=1
fi

# Every #include of the ordered folders: "file:line:target".
mapfile -t ordered < <(printf '%s\n' "$folder_ranks" | awk '{print $1}')
includes="$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]+[">]' \
    --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cu' --include='*.cuh' \
    --include='*.inc' "${ordered[@]}" 2>/dev/null |
    sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1:\2:\3/')"
top_dirs="$(find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n')"

# The layering rule, and the edges between folders/rooms ("unit") and between files for tsort.
checked="$(printf '%s\n' "$includes" | awk -F: -v folder_ranks="$folder_ranks" \
    -v room_ranks="$room_ranks" -v top_dirs="$top_dirs" '
    BEGIN {
        n = split(folder_ranks, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); fr[f[1]] = f[2] }
        n = split(room_ranks, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); rr[f[1]] = f[2] }
        n = split(top_dirs, a, "\n"); for (i = 1; i <= n; i++) dirs[a[i]] = 1
    }
    # "core/<room>" for a file in a room of core/, else its top folder.
    function unit(path,   p) {
        split(path, p, "/")
        return (p[1] == "core" && p[3] != "") ? "core/" p[2] : p[1]
    }
    {
        src = $1; line = $2; dst = $3
        split(dst, d, "/")
        if (!(d[1] in dirs) || d[2] == "") next  # a system or generated header
        print "file", src, dst
        us = unit(src); ud = unit(dst)
        if (us == ud) next
        print "unit", us, ud
        split(us, s, "/")
        if (s[1] != d[1]) {  # between top-level folders
            if (!(d[1] in fr))
                print "bad", src ":" line ": includes " dst ": " d[1] "/ is not in the folder order"
            else if (fr[d[1]] >= fr[s[1]])
                print "bad", src ":" line ": includes " dst ": " d[1] "/ is " \
                    (fr[d[1]] == fr[s[1]] ? "beside" : "after") " " s[1] "/ in the folder order"
            next
        }
        # Within core/: from one room (or the top of core/) to another.
        if (us == "core") next  # an umbrella header at the top of core/ may include every room
        if (ud == "core") { print "bad", src ":" line ": includes " dst ", which is in no room"; next }
        rs = substr(us, 6); rd = substr(ud, 6)
        if (!(rd in rr) || !(rs in rr)) next  # reported above: a folder not in the order
        if (rr[rd] > rr[rs])
            print "bad", src ":" line ": includes " dst ": room " rd " is after room " rs
    }')"
bad="$(printf '%s\n' "$checked" | sed -n 's/^bad //p')"
if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    echo "the includes above run back up (or sideways) against DESIGN.md's order"
    fail=1
fi
# No circle between folders/rooms or between header files (tsort names one when there is).
for kind in unit file; do
    edges="$(printf '%s\n' "$checked" | awk -v k="$kind" '$1 == k { print $2, $3 }' | sort -u)"
    [ "$kind" = file ] && edges="$(printf '%s\n' "$edges" | while read -r a b; do
        [ -f "$b" ] && echo "$a $b"
    done)"
    if ! loop="$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null)" || [ -n "$loop" ]; then
        [ "$kind" = unit ] && echo "folders or rooms include one another in a circle:" ||
            echo "header files include one another in a circle:"
        printf '%s\n' "$loop"
        fail=1
    fi
done

# CMake: a room links only rooms before it; nothing in core/ links a library above the engine.
while read -r room rank; do
    cm="core/$room/CMakeLists.txt"
    [ -f "$cm" ] || { echo "$cm is missing: each room is its own library"; fail=1; continue; }
    for dep in $(grep -A3 'target_link_libraries' "$cm" | grep -oE 'kvscope_core_[a-z0-9_]+' |
        sed 's/^kvscope_core_//' | sort -u); do
        [ "$dep" = "$room" ] && continue
        dep_rank="$(printf '%s\n' "$room_ranks" | awk -v r="$dep" '$1 == r { print $2 }')"
        if [ -z "$dep_rank" ] || [ "$dep_rank" -ge "$rank" ]; then
            echo "$cm links kvscope_core_$dep, which is not a room before $room"
            fail=1
        fi
    done
done <<<"$room_ranks"
if grep -rnE 'kvscope_(lessons|kernels|gui|cmdline|cli)' --include=CMakeLists.txt core; then
    echo "core/ links a target above the engine (lines above)"
    fail=1
fi
if grep -rnE '#include *[<"](imgui|GLFW|cuda)' core; then
    echo "core/ includes ImGui, GLFW or CUDA (lines above)"
    fail=1
fi
# The engine worker hands the window codes (EngineRequest), never the window's words.
if grep -nE '#include *"gui/(strings|engine_words)\.h"|\btr(_later)?\(' gui/engine_worker.*; then
    echo "gui/engine_worker uses the window's words (lines above): gui/views/engine_words.h says them"
    fail=1
fi
if find core -type f | grep -iE 'lesson|sweep|scale'; then
    echo "core/ holds lesson-library files (above): they belong in lessonlib/"
    fail=1
fi
[ "$fail" = 0 ] && echo "the folders and core's $n_rooms rooms layer as DESIGN.md says"
exit "$fail"
