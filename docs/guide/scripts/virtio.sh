#!/bin/sh
# docs/guide/walkthroughs/virtio.md — a real capture: virtio-blk command-to-IRQ, chained to
# the wakeup of the reading task.
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
latscope info "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --json > info.json
latscope report "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --preset cmd-irq --preset chain --format json -o report.json
latscope report "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset chain -o report.html
latscope report "$SAMPLES/ftrace/virtio_blk_direct_read.txt" "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --format json -o ab.json
latscope report "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --fail-if 'block.p99>50ms' -o gate.md
