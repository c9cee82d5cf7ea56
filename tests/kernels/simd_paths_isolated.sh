#!/bin/bash
# The SIMD paths' object files (kernels/CMakeLists.txt) may define no weak (COMDAT) function
# outside their own namespace kvs::cpu::<path>: the linker keeps one copy of each such function
# for the whole program, so an inline or template function emitted by the avx512 objects could
# stand in for the baseline copy and stop an older CPU with SIGILL.
# Usage: simd_paths_isolated.sh OBJECT...   (each path's objects, in kvscope_isa_<path>.dir)
status=0
for obj in "$@"; do
    path=$(basename "$(dirname "$(dirname "$obj")")")   # kvscope_isa_avx512.dir
    path=${path#kvscope_isa_}
    path=${path%.dir}
    bad=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/ {$1=""; $2=""; print}' |
          grep -v "^ *kvs::cpu::$path::" | grep -v "DW.ref.__gxx_personality_v0")
    if [ -n "$bad" ]; then
        echo "$obj ($path): weak symbols outside kvs::cpu::$path::"
        echo "$bad" | sed 's/^/   /'
        status=1
    fi
done
[ $status = 0 ] && echo "$# objects: no weak symbol outside their path's namespace"
exit $status
