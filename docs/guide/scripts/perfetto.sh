#!/bin/sh
# docs/guide/perfetto.md — a Perfetto trace: what is in it, the presets, and the result as
# a trace for ui.perfetto.dev.
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
latscope info "$SAMPLES/perfetto/synthetic_sched_irq.pftrace" > info.txt
latscope info "$SAMPLES/perfetto/synthetic_sched_irq.pftrace" --json > info.json
latscope report "$SAMPLES/perfetto/synthetic_sched_irq.pftrace" --preset irq-handler --preset softirq --preset wakeup --format json -o presets.json
latscope report "$SAMPLES/perfetto/synthetic_sched_irq.pftrace" --preset irq-handler --preset softirq --preset wakeup --format perfetto -o irq.json
