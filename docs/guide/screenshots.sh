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
# The SD capture decoded, zoomed onto its first commands: a session holds the decoder and view.
tmp=$(mktemp -d)
cat > "$tmp/sd.latscope.json" <<JSON
{ "latscope_session": 1,
  "files": [ { "path": "$PWD/samples/sigrok/sd_mode_imx6_snippet.sr",
               "decoders": ["sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3"] } ],
  "view": { "start_ps": 11.30e9, "ps_per_px": 1.05e6 } }
JSON
"$LATSCOPE" --screenshot docs/screenshots/decoders_sd_imx6.png "$tmp/sd.latscope.json"
rm -rf "$tmp"
