#!/usr/bin/env bash
# cmake --install into a temporary prefix, then kvscope-cli run from there, from a folder outside
# the source tree: it must find the default model and the lessons in PREFIX/share/kvscope (not
# in the checkout it was built from, which it also knows), generate text, and say so.
#   install_check.sh BUILD_DIR
set -euo pipefail
build="$1"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" --component cli >/dev/null
cli="$prefix/bin/kvscope-cli"
cd "$prefix"
unset KVSCOPE_ASSETS KVSCOPE_LESSONS
fail() { echo "install_check: $*" >&2; exit 1; }
info="$("$cli" info)"
grep -q "^file: $prefix/share/kvscope/assets/models/kvscope-tiny.bin\$" <<<"$info" ||
    fail "the installed kvscope-cli did not find its model under $prefix: $info"
out="$("$cli" generate -p "The capital of France is" -n 2 2>/dev/null)"
[ "$out" = "The capital of France is Paris." ] || fail "generate printed '$out'"
lessons="$("$cli" lesson --list)"
grep -q "^lessons in $prefix/share/kvscope/lessons" <<<"$lessons" ||
    fail "the installed kvscope-cli did not find its lessons under $prefix: $(head -1 <<<"$lessons")"
trace="$("$cli" replay "$prefix/share/kvscope/assets/traces/default-cached.trace.json" | tail -1)"
[ "$trace" = "stopped: end token" ] || fail "the installed recorded run did not replay: $trace"
echo "install_check: kvscope-cli from $prefix found its model, lessons and recorded runs"
