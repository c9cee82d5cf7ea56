#!/usr/bin/env bash
# Builds kvscope as a web page: a static folder (index.html, kvscope.js, kvscope.wasm,
# kvscope.data) that any static host serves, in build-web/site (KVSCOPE_WEB_BUILD to change).
#   scripts/web.sh                install what building needs, fetch Dear ImGui's sources, build
#   scripts/web.sh --single-file  ... and the same page as one file, build-web/kvscope.html, that
#                                 opens from file:// with no server (web/single_file.py)
#   scripts/web.sh --test         ... both, then (installing chromium) build kvscope-cli in build/
#                                 and run ctest -L web there
#   scripts/web.sh --serve        ... then serve the site on http://127.0.0.1:8000/ (Ctrl+C ends it)
# Dear ImGui's sources come from Debian's imgui source package (through a private deb-src list:
# the system's apt sources are not changed), checksum-verified, into the build folder only.
source "$(dirname "$0")/setup.sh"
mode="${1:-}"
case "$mode" in "" | --single-file | --test | --serve) ;; *)
    echo "usage: scripts/web.sh [--single-file | --test | --serve]" >&2
    exit 2
    ;;
esac
# What building needs; debian-archive-keyring signs the Debian source list below (Ubuntu does not
# have it installed). The browser is the tests' only.
kvs_require_packages emscripten cmake make python3 fonts-dejavu-core fonts-wqy-microhei \
    libstb-dev nlohmann-json3-dev libcli11-dev python3-fonttools unicode-data debian-archive-keyring
[ "$mode" = --test ] && kvs_require_packages chromium
BUILD="${KVSCOPE_WEB_BUILD:-$KVS_ROOT/build-web}"
DEPS="$BUILD/deps"
# Debian bookworm's imgui 1.86+ds-1 (the version of libimgui-dev the desktop build links).
IMGUI_TAR=imgui_1.86+ds.orig.tar.xz
IMGUI_SHA256=0dace0e8e57d298eb6e93af12dc19420cb96330832f6495c733b90aeeef11f64
IMGUI="$DEPS/imgui-1.86"

if [ ! -f "$IMGUI/imgui.cpp" ]; then
    apt_dir="$DEPS/apt"
    mkdir -p "$apt_dir/lists/partial"
    cat >"$apt_dir/imgui-src.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir"
              -o "Dir::State::Lists=$apt_dir/lists" -o Debug::NoDropPrivs=1)
    echo "kvscope: fetching Dear ImGui's sources (Debian source package imgui)" >&2
    apt-get "${apt_opts[@]}" update -qq >&2
    (cd "$DEPS" && apt-get "${apt_opts[@]}" source --download-only imgui >&2 2>&1 |
        grep -v "unsandboxed" >&2 || true)
    echo "$IMGUI_SHA256  $DEPS/$IMGUI_TAR" | sha256sum -c --quiet - ||
        { echo "kvscope: $IMGUI_TAR: checksum differs from the one this script knows" >&2; exit 1; }
    rm -rf "$IMGUI" && mkdir -p "$IMGUI"
    tar -xf "$DEPS/$IMGUI_TAR" -C "$IMGUI" --strip-components=1
fi

# The Chinese font cut to the characters the window and the lessons use (web/cjk_glyphs.py: what
# gui/draw/fonts.cpp merges on the desktop): 5 MB whole. Debian's fontTools, under Debian's python.
CJK="$BUILD/fonts/wqy-microhei-cut.ttf"
mkdir -p "$BUILD/fonts"
python3 "$KVS_ROOT/web/cjk_glyphs.py" "$IMGUI/imgui_draw.cpp" "$KVS_ROOT" >"$BUILD/fonts/unicodes.txt"
/usr/bin/python3 -m fontTools.subset /usr/share/fonts/truetype/wqy/wqy-microhei.ttc --font-number=0 \
    --unicodes-file="$BUILD/fonts/unicodes.txt" --output-file="$CJK.tmp" 2>&1 | grep -v "FFTM" >&2 || true
[ -s "$CJK.tmp" ] || { echo "kvscope: cutting the Chinese font failed" >&2; exit 1; }
cmp -s "$CJK.tmp" "$CJK" && rm -f "$CJK.tmp" || mv -f "$CJK.tmp" "$CJK"

# Node 20 does not look in /usr/share/nodejs, where Debian's emscripten finds acorn.
export NODE_PATH=/usr/share/nodejs
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# KVSCOPE_WEB_SIMD=OFF builds the page without WebAssembly SIMD (for a browser that lacks it).
simd="${KVSCOPE_WEB_SIMD:-ON}"
# Configured on every run with these options (setup.sh's kvs_configure says why).
# -fexceptions: the engine reports user errors as exceptions.
emcmake cmake -S "$KVS_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_NATIVE=OFF \
    -DKVSCOPE_TESTS=OFF -DCMAKE_CUDA_COMPILER=OFF -DKVSCOPE_WEB_IMGUI_DIR="$IMGUI" "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS="-fexceptions" -DKVSCOPE_WEB_SIMD="$simd" -DKVSCOPE_WEB_CJK_FONT="$CJK" >&2
cmake --build "$BUILD" -j "$(nproc)" --target kvscope >&2

site="$BUILD/site"
mkdir -p "$site"
cp -f "$KVS_ROOT/web/index.html" "$site/index.html"
for f in kvscope.js kvscope.wasm kvscope.data; do
    cp -f "$BUILD/gui/$f" "$site/$f"
done
echo "kvscope: site in $site ($(du -sh "$site" | cut -f1)):" >&2
ls -l "$site" >&2
# The page as one file: what a teacher sends when there is no web server.
if [ "$mode" = --single-file ] || [ "$mode" = --test ]; then
    python3 "$KVS_ROOT/web/single_file.py" "$site" "$BUILD/kvscope.html"
fi

case "$mode" in
--test)
    # Configured again with the site (and chromium, installed above, found): the web tests are
    # registered even when test.sh configured build/ first. Every one must run, none skipped (the
    # site and the one file were just built): 12 tests, 15 with ../shared's stories260K
    # (tests/design/docs_check.py counts them in web/web_tests.cmake; Firefox's, where installed, besides).
    kvs_build "$KVS_ROOT/build" -DKVSCOPE_WEB_SITE="$site"
    cd "$KVS_ROOT/build" && kvs_ctest 12 0 -L web --output-on-failure
    ;;
--serve)
    echo "kvscope: http://127.0.0.1:8000/  (e.g. ?model=toy&decode=3)" >&2
    exec python3 -m http.server 8000 --bind 127.0.0.1 --directory "$site"
    ;;
esac
