#!/bin/sh
# docs/guide/walkthroughs/axienet.md — axienet: TX completion in hard IRQ or NAPI?
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
latscope sim axienet-napi --set tx_completion=hardirq --format json > hardirq.json
latscope sim axienet-napi --set tx_completion=napi --format json > napi.json
latscope sim axienet-napi --set tx_completion=hardirq --trace-out hardirq.txt --format md > hardirq.md
latscope info hardirq.txt --json > hardirq-info.json
