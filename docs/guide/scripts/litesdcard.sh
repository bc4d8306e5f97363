#!/bin/sh
# docs/guide/walkthroughs/litesdcard.md — LiteSDCard: poll or IRQ?
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
for mode in cmd-irq dma-irq all-irq poll-5us poll-0us; do
  latscope sim litesdcard --set mode=$mode --format json > $mode.json
done
latscope sim litesdcard --set cpu=microwatt-100mhz --format json > microwatt.json
latscope sim litesdcard --set driver=old --set irq_trigger=level --format json > old-level.json
latscope sim litesdcard --set driver=old --set irq_trigger=edge --format json > old-edge.json
