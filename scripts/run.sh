#!/usr/bin/env bash
# Build kvscope (installing what is missing) and open its window on the built-in default model
# (build/gui/kvscope; without a display it says so and points to kvscope-cli).
# Arguments go to the app, e.g. scripts/run.sh --model toy
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}"
kvs_build "$KVS_ROOT/build"
exec "$KVS_ROOT/build/gui/kvscope" "$@"
