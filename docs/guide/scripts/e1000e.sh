#!/bin/sh
# docs/guide/walkthroughs/e1000e.md — how often to flush posted PCIe writes?
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
for n in 0 1 2 4 8 16; do
  latscope sim e1000e-mta --set flush_every=$n --format json > flush-$n.json
done
latscope sim e1000e-mta --set flush_every=0 --trace-out flush-0.vcd --format md > flush-0.md
latscope info flush-0.vcd --json > flush-0-vcd.json
