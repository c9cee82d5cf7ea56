#!/usr/bin/env bash
# core/ is the engine alone (DESIGN.md): it includes nothing from the lesson library, the backends,
# the command line or the window, and holds no lesson, batch-sweep or scale-accounting file.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
fail=0
if grep -rnE '#include *[<"](lessonlib|kernels|cli|gui)/|#include *[<"](imgui|GLFW|cuda)' \
    "$root/core"; then
    echo "core/ includes a file from a layer above it (lines above)"
    fail=1
fi
if ls "$root/core" | grep -iE 'lesson|sweep|scale'; then
    echo "core/ holds lesson-library files (above): they belong in lessonlib/"
    fail=1
fi
if grep -nE 'kvscope_(lessons|kernels|gui)' "$root/core/CMakeLists.txt"; then
    echo "core/CMakeLists.txt links a target above the engine"
    fail=1
fi
[ "$fail" = 0 ] && echo "core/ stands alone"
exit "$fail"
