#!/usr/bin/env bash
# Views draw what the engine computed: every matrix, row, mask, byte count and probability a panel
# shows comes from the step record or a core function over it (core/session/attention_explain.h,
# core/model/counts.h, ...), never from arithmetic of the model's own in gui/ or web/. This fails
# on what such arithmetic looks like in a view:
#   - a dot product: a sum accumulating the product of two subscripted values
#     (`dot += q[d] * k[j * d + d]`), the q·k of a score or the Σ w·v of an output;
#   - the step's raw query and output vectors (StepRecord::q_rows, attn_out), which only core's
#     explain functions index;
#   - a mask decided by comparing positions (`masked = j > q`), which key_visible decides;
#   - a softmax: exp of a score, or a division of the scaled scores by 1/√d_k worked out here
#     (`sqrt(` of a head size).
# Comments and string literals are stripped before the scan.
#   tests/design/views_no_model_math.sh [ROOT]      exit status 1 when a view does model math
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$root" || exit 1
mapfile -t files < <(find gui web -type f \( -name '*.cpp' -o -name '*.h' \) 2>/dev/null | sort)
[ "${#files[@]}" -gt 0 ] || { echo "gui/ and web/ hold no source files"; exit 1; }

found="$(awk '
    FNR == 1 { in_comment = 0 }
    {
        line = $0
        # Block comments, line comments, string and character literals out.
        out = ""
        while (length(line) > 0) {
            if (in_comment) {
                e = index(line, "*/")
                if (e == 0) { line = ""; break }
                line = substr(line, e + 2); in_comment = 0; continue
            }
            c = substr(line, 1, 1); two = substr(line, 1, 2)
            if (two == "//") break
            if (two == "/*") { in_comment = 1; line = substr(line, 3); continue }
            if (c == "\"" || c == "\x27") {
                q = c; i = 2
                while (i <= length(line)) {
                    ch = substr(line, i, 1)
                    if (ch == "\\") { i += 2; continue }
                    if (ch == q) break
                    i++
                }
                out = out q q; line = substr(line, i + 1); continue
            }
            out = out c; line = substr(line, 2)
        }
        s = out
        # Template arguments (static_cast<int>, std::vector<float>) are not comparisons.
        gsub(/<[A-Za-z0-9_: ]*>/, "", s)
        why = ""
        if (s ~ /\+=[^;]*\[[^;]*\][^;]*\*[^;]*\[/) why = "a dot product (a sum of products of subscripted values)"
        else if (s ~ /(^|[^A-Za-z0-9_])(q_rows|attn_out)([^A-Za-z0-9_]|$)/) why = "the step'"'"'s raw q or output vectors (read them through core/session/attention_explain.h)"
        else if (s ~ /masked[A-Za-z0-9_]*[ \t]*=[^=;][^;]*[^-]>[^=>]/) why = "a mask decided by comparing positions (core/model/attention_mask.h: key_visible)"
        else if (s ~ /(^|[^A-Za-z0-9_])(std::)?exp[f]?[ \t]*\(/) why = "an exp: a softmax computed in a view"
        else if (s ~ /sqrt[f]?[ \t]*\([^;]*head_dim/) why = "1/sqrt(d_k) worked out in a view"
        if (why != "") printf "%s:%d: %s: %s\n", FILENAME, FNR, why, substr($0, 1, 120)
    }
' "${files[@]}")"
if [ -n "$found" ]; then
    echo "views do model arithmetic (draw core's numbers instead):"
    echo "$found"
    exit 1
fi
echo "gui/ and web/: ${#files[@]} files, no model arithmetic"
