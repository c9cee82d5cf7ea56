#!/usr/bin/env bash
# Runs a command on a private virtual display. Xvfb picks a free display number itself
# (-displayfd) instead of xvfb-run -a's search, which races with other servers starting at the
# same moment, and nothing here can fail the run while cleaning up after it. -noreset: an X
# server resets whenever its last client disconnects, and a client connecting during the reset
# is refused; the xdotool scripts connect and disconnect every 0.1 s while the window starts
# (measured: 5 of 60 app starts failed with "Failed to open display" without it, 0 of 60 with it).
#   tests/gui/with-xvfb.sh COMMAND [ARGS...]      exit status: COMMAND's, or 125 if Xvfb did not start
set -u
dir=$(mktemp -d)
Xvfb -displayfd 3 -screen 0 "${KVSCOPE_XVFB_SCREEN:-1280x800x24}" -nolisten tcp -noreset \
    3>"$dir/display" 2>"$dir/xvfb.log" &
xvfb=$!
for _ in $(seq 1 200); do  # up to 10 s
    grep -q '^[0-9][0-9]*$' "$dir/display" 2>/dev/null && break
    kill -0 "$xvfb" 2>/dev/null || break
    sleep 0.05
done
if ! grep -q '^[0-9][0-9]*$' "$dir/display" 2>/dev/null; then
    echo "with-xvfb: Xvfb did not start: $(tail -n 1 "$dir/xvfb.log" 2>/dev/null)" >&2
    kill "$xvfb" 2>/dev/null
    rm -rf "$dir"
    exit 125
fi
DISPLAY=":$(cat "$dir/display")" "$@"
rc=$?
kill "$xvfb" 2>/dev/null
wait "$xvfb" 2>/dev/null
rm -rf "$dir"
exit "$rc"
