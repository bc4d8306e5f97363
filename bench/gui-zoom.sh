#!/bin/bash
# Opens a capture in the real window under Xvfb, zooms in 30 steps (W, each halving the view)
# and out again (S), then closes the window; prints the frame log (LATSCOPE_FRAME_LOG: each
# frame's time, the first frame, when the tracks were drawn) and the peak RSS.
#   bench/gui-zoom.sh FILE [LATSCOPE]     (default target/release/latscope)
# Needs Xvfb and xdotool (CI installs both). Without a window manager the window can only be
# destroyed from outside (`xdotool windowclose`): winit then panics on the vanished window
# while closing, after the frame log is written; its backtrace is filtered out below.
set -euo pipefail
FILE=$1
LS=${2:-target/release/latscope}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/latscope-zoom.XXXXXX")
trap 'kill "$xvfb" 2>/dev/null || true; rm -rf "$tmp"' EXIT
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
sleep 1
export DISPLAY=$display
LATSCOPE_FRAME_LOG=$tmp/frames.txt /usr/bin/time -f '%M' -o "$tmp/rss" "$LS" "$FILE" 2>"$tmp/stderr" &
app=$!
# Until the capture is drawn (the log's first line appears only at exit, so wait on the window).
for _ in $(seq 1 100); do
    win=$(xdotool search --name latscope 2>/dev/null | head -n1 || true)
    [ -n "$win" ] && break
    sleep 0.2
done
[ -n "${win:-}" ] || { echo "gui-zoom.sh: no latscope window" >&2; exit 1; }
sleep 8
xdotool windowactivate --sync "$win" 2>/dev/null || xdotool windowfocus --sync "$win"
for _ in $(seq 1 30); do xdotool key --window "$win" w; sleep 0.15; done
for _ in $(seq 1 30); do xdotool key --window "$win" s; sleep 0.15; done
sleep 1
xdotool windowclose "$win" 2>/dev/null || kill "$app"
wait "$app" || true
cat "$tmp/frames.txt" 2>/dev/null || echo "(no frame log: the window did not close cleanly)"
echo "peak_rss_kb: $(tail -n1 "$tmp/rss" 2>/dev/null || echo '?')"
