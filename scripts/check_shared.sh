#!/usr/bin/env bash
# The run.c reference data the suite compares against (../shared beside the clone, or
# $KVSCOPE_SHARED_DIR). Without it CMake skips the reference tests, and a clean clone would go
# green with zero comparisons against run.c: so scripts/test.sh stops here and names what is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${KVSCOPE_SHARED_DIR:-$root/../shared}"
needed=(models/stories260K.bin models/tok512.bin
        reference/config.json reference/greedy_outputs.json reference/tokens_once_upon.json
        reference/logits_once_upon.txt reference/attention_all_heads_once_upon.txt
        reference/attention_L0_H0_once_upon.txt reference/attention_L4_H7_once_upon.txt)
missing=()
for f in "${needed[@]}"; do
    [ -s "$shared/$f" ] || missing+=("$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "kvscope: the run.c reference data is missing from $shared: ${missing[*]}" >&2
    echo "kvscope: put the shared folder (models/, reference/) beside the clone as ../shared," \
         "or set KVSCOPE_SHARED_DIR; without it the reference tests would not be built" >&2
    exit 2
fi
