#!/bin/sh
# Regenerates docs/screenshots/ with the real window (`latscope --screenshot`).
# Needs a display; on a machine without one: apt-get install xvfb libgl1-mesa-dri libegl1
# and this script runs itself under xvfb-run.
set -eu
cd "$(dirname "$0")/../.."
LATSCOPE=${LATSCOPE:-target/release/latscope}
[ -x "$LATSCOPE" ] || cargo build --release -p latscope
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$0" "$@"
fi
mkdir -p docs/screenshots
"$LATSCOPE" --screenshot docs/screenshots/ftrace_virtio_blk.png samples/ftrace/virtio_blk_direct_read.txt \
  --rule block --rule irq-handler
"$LATSCOPE" --screenshot docs/screenshots/ab_block_two_recordings.png \
  samples/ftrace/blk_read.txt samples/ftrace/virtio_blk_direct_read.txt --rule block
"$LATSCOPE" --screenshot docs/screenshots/simulator_litesdcard.png
"$LATSCOPE" --screenshot docs/screenshots/sigrok_two_captures.png \
  samples/sigrok/mixed_100khz_2logic_1analog.sr samples/sigrok/sd_mode_imx6_snippet.sr
