#!/usr/bin/env bash
# The window keeps no state in function statics: a panel's state between frames is a struct beside
# the panel (gui/panels/*.h), owned by the App; what several places share is the UiState. This
# fails on every function-local `static` in gui/ that is not `static const` or `static constexpr`
# (immutable tables and names stay allowed).
#
# The scan strips comments, string and character literals and preprocessor lines, then follows the
# braces: a `{` after `namespace`, `class`, `struct`, `union`, `enum` or `extern` (with no `(` in
# its statement) opens a scope where `static` declares a member or a file-local name; any other
# `{` opens a block (a function's body, a lambda's, an initializer). In a block `static` can only
# declare a variable, so every statement in a block that starts with `static` is one.
#   tests/design/gui_state.sh [ROOT]      exit status 1 when such a static is found
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$root" || exit 1
mapfile -t files < <(find gui -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
[ "${#files[@]}" -gt 0 ] || { echo "gui/ holds no source files"; exit 1; }

found="$(awk '
    # The statement read so far starts with static (storage, not static_assert or static_cast):
    # print it unless it is const or constexpr.
    function check(   s, words, n, i, w, is_static, is_const) {
        s = stmt
        gsub(/[ \t\n]+/, " ", s)
        sub(/^ /, "", s)
        n = split(s, words, /[^A-Za-z0-9_]+/)
        is_static = 0; is_const = 0
        for (i = 1; i <= n; i++) {
            w = words[i]
            if (w == "static") is_static = 1
            else if (w == "const" || w == "constexpr") is_const = 1
            else if (w != "inline" && w != "thread_local" && w != "") break
        }
        if (is_static && !is_const)
            printf "%s:%d: a function-local static holds state: %s\n", FILENAME, stmt_line, \
                substr(s, 1, 100)
    }
    function end_statement(c,   s, kind) {
        if (depth > 0 && scope[depth] == "B") check()
        if (c == "{") {
            s = stmt
            gsub(/[ \t\n]+/, " ", s)
            kind = (s ~ /(^|[^A-Za-z0-9_])(namespace|class|struct|union|enum|extern)([^A-Za-z0-9_]|$)/ &&
                    s !~ /\(/) ? "C" : "B"
            scope[++depth] = kind
        } else if (c == "}") {
            if (depth > 0) depth--
        }
        stmt = ""; stmt_line = 0
    }
    FNR == 1 { depth = 0; stmt = ""; stmt_line = 0; in_comment = 0; in_raw = 0; continued = 0 }
    {
        line = $0
        # A preprocessor line (and its continuations) is not code the braces count.
        if (!in_comment && !in_raw && (continued || line ~ /^[ \t]*#/)) {
            continued = line ~ /\\$/
            next
        }
        n = length(line)
        for (i = 1; i <= n; i++) {
            c = substr(line, i, 1)
            if (in_comment) {
                if (c == "*" && substr(line, i + 1, 1) == "/") { in_comment = 0; i++ }
                continue
            }
            if (in_raw) {
                e = index(substr(line, i), raw_end)
                if (e == 0) { i = n; continue }
                i += e + length(raw_end) - 2; in_raw = 0
                continue
            }
            if (c == "/" && substr(line, i + 1, 1) == "/") break
            if (c == "/" && substr(line, i + 1, 1) == "*") { in_comment = 1; i++; continue }
            if (c == "\"") {
                # R"delim( ... )delim" may span lines; an ordinary string ends on its line.
                if (i > 1 && substr(line, i - 1, 1) == "R") {
                    p = index(substr(line, i + 1), "(")
                    raw_end = ")" substr(line, i + 1, p - 1) "\""
                    in_raw = 1; i += p
                    continue
                }
                for (i++; i <= n; i++) {
                    c = substr(line, i, 1)
                    if (c == "\\") { i++; continue }
                    if (c == "\"") break
                }
                stmt = stmt " \"\""
                continue
            }
            if (c == "\x27" && !(i > 1 && substr(line, i - 1, 1) ~ /[A-Za-z0-9_]/)) {
                for (i++; i <= n; i++) {
                    c = substr(line, i, 1)
                    if (c == "\\") { i++; continue }
                    if (c == "\x27") break
                }
                stmt = stmt " 0"
                continue
            }
            if (c == "{" || c == "}" || c == ";") { end_statement(c); continue }
            if (stmt_line == 0 && c !~ /[ \t]/) stmt_line = FNR
            stmt = stmt c
        }
        stmt = stmt "\n"
    }
' "${files[@]}")"
if [ -n "$found" ]; then
    printf '%s\n' "$found"
    echo "state between frames belongs in the panel's struct (gui/panels/*.h, owned by the App) or in"
    echo "UiState when several places share it, not in a function static"
    exit 1
fi
echo "gui/: no function-local static holds state (${#files[@]} files)"
