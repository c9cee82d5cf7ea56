#!/usr/bin/env bash
# The tree layers as DESIGN.md's "Rooms" says, read from its three order lines:
#   folders:    core → kernels lessonlib → ...     (groups of folders, lowest first)
#   core rooms: util → files → ...                 (core/'s rooms, lowest first)
#   gui rooms:  state engine → views → ...         (gui/'s rooms, groups lowest first)
# Every #include of a folder in the order names its own folder or one in an earlier group (never
# one beside it or after it, never tests/ or tools/); every #include in a room of core/ or gui/
# names its own room or one in an earlier group; neither the folders, nor the rooms, nor the
# header files include one another in a circle. Also: core/ (at most 4 files at its top) and gui/
# (at most 6) are rooms (at least 4, each in the order), each room a library linked only to rooms
# before it in CMake; core/ knows no ImGui, GLFW or CUDA and holds no lesson file; the window's
# engine worker uses none of the window's words; tests/ keeps no test file at its top.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
design="$root/DESIGN.md"
fail=0
cd "$root" || exit 1

folders_line="$(grep -m1 '^folders:' "$design" | sed 's/^folders://')"
rooms_line="$(grep -m1 '^core rooms:' "$design" | sed 's/^core rooms://')"
gui_rooms_line="$(grep -m1 '^gui rooms:' "$design" | sed 's/^gui rooms://')"
if [ -z "$folders_line" ] || [ -z "$rooms_line" ] || [ -z "$gui_rooms_line" ]; then
    echo "DESIGN.md: no 'folders:', 'core rooms:' or 'gui rooms:' order line"
    exit 1
fi
# "a → b c → d" as lines "name rank".
ranks() { printf '%s\n' "$1" | sed 's/→/\n/g' | awk 'NF { for (i = 1; i <= NF; i++) print $i, NR - 1 }'; }
folder_ranks="$(ranks "$folders_line")"
room_ranks="$(ranks "$rooms_line")"
gui_room_ranks="$(ranks "$gui_rooms_line")"
for list in "$folder_ranks" "$room_ranks" "$gui_room_ranks"; do
    dup="$(printf '%s\n' "$list" | awk '{print $1}' | sort | uniq -d)"
    [ -z "$dup" ] || { echo "DESIGN.md: $dup named twice in an order line"; fail=1; }
done

# core/ and gui/ are rooms: each a folder named in the order, at least 4 of them, few files at
# their top (core: 4, gui: 6).
rooms_of() { [ "$1" = core ] && printf '%s\n' "$room_ranks" || printf '%s\n' "$gui_room_ranks"; }
for top in core gui; do
    ranks_here="$(rooms_of "$top")"
    max_top=4
    [ "$top" = gui ] && max_top=6
    n=0
    while read -r room _; do
        if [ -d "$top/$room" ]; then n=$((n + 1)); else
            echo "DESIGN.md names $top room '$room', which is not a folder of $top/"
            fail=1
        fi
    done <<<"$ranks_here"
    for d in "$top"/*/; do
        d="${d%/}"
        if ! grep -q "^${d#"$top"/} " <<<"$ranks_here"; then
            echo "$d/ is not in DESIGN.md's $top room order"
            fail=1
        fi
    done
    [ "$n" -ge 4 ] || { echo "$top/ has $n rooms (at least 4 expected)"; fail=1; }
    [ "$top" = core ] && n_rooms=$n || n_gui_rooms=$n
    top_files="$(find "$top" -maxdepth 1 -type f | sort)"
    if [ "$(printf '%s' "$top_files" | grep -c .)" -gt "$max_top" ]; then
        echo "$top/ holds more than $max_top files at its top (they belong in its rooms):"
        printf '%s\n' "$top_files"
        fail=1
    fi
done

# tests/ is in folders by the room each test checks (tests/model/, tests/session/, ...; shared
# fixtures in tests/support/): no test file at its top, where a newcomer would not look for it.
tests_top="$(find tests -maxdepth 1 -type f \( -name 'test_*' -o -name '*.cpp' -o -name '*.h' \) | sort)"
if [ -n "$tests_top" ]; then
    echo "tests/ holds test files at its top (they belong in the folder of the room they test):"
    printf '%s\n' "$tests_top"
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
    -v room_ranks="$room_ranks" -v gui_room_ranks="$gui_room_ranks" -v top_dirs="$top_dirs" '
    BEGIN {
        n = split(folder_ranks, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); fr[f[1]] = f[2] }
        n = split(room_ranks, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); rr["core/" f[1]] = f[2] }
        n = split(gui_room_ranks, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); rr["gui/" f[1]] = f[2] }
        n = split(top_dirs, a, "\n"); for (i = 1; i <= n; i++) dirs[a[i]] = 1
    }
    # "core/<room>" or "gui/<room>" for a file in a room of core/ or gui/, else its top folder.
    function unit(path,   p) {
        split(path, p, "/")
        return ((p[1] == "core" || p[1] == "gui") && p[3] != "") ? p[1] "/" p[2] : p[1]
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
        # Within core/ or gui/: from one room (or the top) to another.
        if (us == s[1]) next  # a file at the top (the umbrella header, main.cpp) may include every room
        if (ud == s[1]) { print "bad", src ":" line ": includes " dst ", which is in no room"; next }
        if (!(ud in rr) || !(us in rr)) next  # reported above: a folder not in the order
        if (rr[ud] >= rr[us])
            print "bad", src ":" line ": includes " dst ": room " ud " is " \
                (rr[ud] == rr[us] ? "beside" : "after") " room " us
    }')" || { echo "the include check could not run"; exit 1; }
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

# Within the folders above the engine, counting a .cpp and its header as one unit (lesson.cpp and
# lesson.h are "lessonlib/lesson"), no unit includes one that includes it back: the parser above
# the checks and questions it calls, never beside them. core/ and kernels/ are not held to it yet:
# core's rooms (three pairs of files within a room) and kernels/cuda's launchers (each kernel's .cu
# includes kernel_launchers.h, which declares the kernel from its .cuh) still do.
unit_folders="lessonlib cmdline cli gui web"
unit_edges="$(printf '%s\n' "$checked" | awk -v folders="$unit_folders" '
    BEGIN { n = split(folders, f, " "); for (i = 1; i <= n; i++) in_scope[f[i]] = 1 }
    function stem(p) { sub(/\.[A-Za-z]+$/, "", p); return p }
    $1 == "file" {
        split($2, s, "/"); split($3, d, "/")
        if (!(s[1] in in_scope) || s[1] != d[1]) next
        a = stem($2); b = stem($3)
        if (a != b) print a, b
    }' | sort -u)"
if ! loop="$(printf '%s\n' "$unit_edges" | tsort 2>&1 >/dev/null)" || [ -n "$loop" ]; then
    echo "units (a .cpp and its header) of $unit_folders include one another in a circle:"
    printf '%s\n' "$loop" | sed -E 's/^tsort: (-: )?//'
    fail=1
fi

# CMake: a room links only rooms before it; nothing in core/ links a library above the engine.
for top in core gui; do
    ranks_here="$(rooms_of "$top")"
    while read -r room rank; do
        cm="$top/$room/CMakeLists.txt"
        [ -f "$cm" ] || { echo "$cm is missing: each room is its own library"; fail=1; continue; }
        for dep in $(grep -A3 'target_link_libraries' "$cm" | grep -oE "kvscope_${top}_[a-z0-9_]+" |
            sed "s/^kvscope_${top}_//" | sort -u); do
            [ "$dep" = "$room" ] && continue
            dep_rank="$(printf '%s\n' "$ranks_here" | awk -v r="$dep" '$1 == r { print $2 }')"
            if [ -z "$dep_rank" ] || [ "$dep_rank" -ge "$rank" ]; then
                echo "$cm links kvscope_${top}_$dep, which is not a room before $room"
                fail=1
            fi
        done
    done <<<"$ranks_here"
done
if grep -rnE 'kvscope_(lessons|kernels|gui|cmdline|cli)' --include=CMakeLists.txt core; then
    echo "core/ links a target above the engine (lines above)"
    fail=1
fi
if grep -rnE '#include *[<"](imgui|GLFW|cuda)' core; then
    echo "core/ includes ImGui, GLFW or CUDA (lines above)"
    fail=1
fi
# The engine worker hands the window codes (EngineRequest), never the window's words.
if grep -rnE '#include *"gui/(state/strings|views/engine_words)\.h"|\btr(_later)?\(' gui/engine; then
    echo "gui/engine/ uses the window's words (lines above): gui/views/engine_words.h says them"
    fail=1
fi
if find core -type f | grep -iE 'lesson|sweep|scale'; then
    echo "core/ holds lesson-library files (above): they belong in lessonlib/"
    fail=1
fi
[ "$fail" = 0 ] && echo "the folders, core's $n_rooms rooms and gui's $n_gui_rooms rooms layer as DESIGN.md says"
exit "$fail"
