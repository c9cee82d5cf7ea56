# Shared by scripts/run.sh and scripts/test.sh (sourced, not run): installs the Debian packages
# kvscope needs when they are missing, then configures and builds incrementally.
#   kvs_require_packages PKG...   install what is missing (apt as root or via sudo), else explain
#   kvs_configure DIR [cmake args]  configure DIR with these options (every time: see below)
#   kvs_build DIR [cmake args]      kvs_configure, then build incrementally
set -euo pipefail

KVS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# What the build needs. The GUI packages are here too: the README's run command opens the app.
KVS_BUILD_PACKAGES=(cmake g++ make pkg-config catch2 nlohmann-json3-dev libcli11-dev unicode-data
                    libsentencepiece-dev
                    libimgui-dev libglfw3-dev libstb-dev fonts-dejavu-core fonts-wqy-microhei)
# What the test suite needs on top: a virtual display for the GUI tests (and xdotool to type
# into the window), clang for the fuzzers, clang-format for the formatting check, python3 for the
# check that every Catch2 test case has a ctest entry that runs it (tests/design/ctest_names.py).
KVS_TEST_PACKAGES=(xvfb xauth libgl1-mesa-dri xdotool clang libclang-rt-14-dev clang-format python3)

kvs_missing_packages() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    echo "${missing[@]:-}"
}

kvs_require_packages() {
    local missing
    missing="$(kvs_missing_packages "$@")"
    [ -z "$missing" ] && return 0
    local apt=(apt-get install -y --no-install-recommends $missing)
    echo "kvscope: installing missing packages: $missing" >&2
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" -qq >&2
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        sudo DEBIAN_FRONTEND=noninteractive "${apt[@]}" -qq >&2
    else
        echo "kvscope: please install them first:  sudo apt-get install $missing" >&2
        exit 1
    fi
}

# Configured on every run, with the options given, not only when DIR has no CMakeCache.txt: what a
# script installed since the last configure (chromium by web.sh, llama.cpp by peer.sh) is probed
# again (find_program and pkg-config search again where they found nothing), and an option given
# on this run (web.sh's -DKVSCOPE_WEB_SITE) takes effect in a folder test.sh configured before. A
# configure of an existing folder takes about a second.
kvs_configure() {
    local dir="$1"
    shift
    cmake -S "$KVS_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >&2
}

kvs_build() {
    kvs_configure "$@"
    cmake --build "$1" -j "$(nproc)" >&2
}

# ctest in the current folder, failing when it ran nothing or fewer than expected
# (scripts/ctest_checked.sh MIN_RAN MAX_SKIPPED [ctest args]).
kvs_ctest() {
    "$KVS_ROOT/scripts/ctest_checked.sh" "$@"
}
