#!/bin/sh
# docs/guide/walkthroughs/imx8mq.md — i.MX8MQ: why did reads get 30% slower?
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
for soc in imx8mq imx93; do
  for p in 0.25 0.8; do
    latscope sim imx8mq-cpuidle --set soc=$soc --set idle_probability=$p --format json > $soc-$p.json
  done
done
latscope sim imx8mq-cpuidle --set soc=imx8mq --set idle_probability=0.8 --set pm_qos=on --format json > imx8mq-0.8-qos.json
