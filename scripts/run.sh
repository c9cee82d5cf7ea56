#!/usr/bin/env bash
# Build kvscope (installing what is missing) and open it on the embedded default model.
# Arguments go to the app, e.g. scripts/run.sh --model toy
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}"
kvs_build "$KVS_ROOT/build"
exec "$KVS_ROOT/build/cli/kvscope-cli" generate --prompt "Today's weather is so" "$@"
