#!/usr/bin/env bash
# A synthetic fleet for docs/PERFORMANCE.md: N captures of the simulator's imx8mq-cpuidle
# scenario with its settings (soc, idle probability, PM QoS) and a commit as labels, each
# analysed and appended with `latscope report --dataset` (JOBS appends at once); then
# `latscope fleet --group-by soc,pm_qos` timed with /usr/bin/time (wall, peak RSS), and the
# same per-group counts and percentiles in DataFusion (docs/FLEET.md's SQL) for the ratio.
#
# usage: bench/fleet_scale.sh N [OUT_DIR]
#   READ_MIB   data read per simulated capture (default 400: 6,400 requests, 19,200 pairs)
#   JOBS       appends run at once (default 2)
#   BIN        the latscope binary (default target/release/latscope)
#   KEEP_DS=1  keep an existing OUT_DIR/ds and only rerun the queries
#   DF_MEMORY_GB=N  cap DataFusion's memory pool (bench/fleet_datafusion_check.py)
set -euo pipefail
n=${1:?usage: bench/fleet_scale.sh N [OUT_DIR]}
out=${2:-/tmp/latscope-fleet-$n}
export READ_MIB=${READ_MIB:-400}
jobs=${JOBS:-2}
export BIN=${BIN:-target/release/latscope}
here=$(cd "$(dirname "$0")/.." && pwd)
tf='%e s wall, %U s user, %M KiB peak RSS'

one() { # capture number, output directory: simulate, then analyse and append (timed)
  local i=$1 out=$2 socs=(imx8mq imx93) idle=(0.25 0.8) qos=(on off)
  local soc=${socs[$((i % 2))]} ip=${idle[$((i / 2 % 2))]} q=${qos[$((i / 4 % 2))]}
  local commit t
  commit=c$(printf %02d $(((i - 1) * 10 / N)))
  t="$out/traces/c$i.txt"
  "$BIN" sim imx8mq-cpuidle --set "soc=$soc" --set "idle_probability=$ip" --set "pm_qos=$q" \
    --set "read_mib=$READ_MIB" --seed "$i" --trace-out "$t" >/dev/null
  /usr/bin/time -f "%e %M" -o "$out/times/c$i" \
    "$BIN" report "$t" --preset irq-handler --preset block --preset wakeup --format json \
    --dataset "$out/ds" --label "soc=$soc" --label "idle=$ip" --label "pm_qos=$q" \
    --label "commit=$commit" >/dev/null 2>"$out/logs/c$i"
  rm -f "$t"
}
export -f one
export N=$n

if [ "${KEEP_DS:-0}" != 1 ]; then
  rm -rf "$out"
  mkdir -p "$out/traces" "$out/times" "$out/logs"
  a=$(date +%s.%N)
  seq 1 "$n" | xargs -P "$jobs" -I{} bash -c 'one {} "$0"' "$out"
  b=$(date +%s.%N)
  pairs=$(cat "$out"/logs/* | grep -o '([0-9]* pairs)' | tr -dc '0-9\n' | paste -sd+ | bc)
  report_s=$(cat "$out"/times/* | awk '{s += $1} END {print s}')
  report_rss=$(cat "$out"/times/* | awk '$2 > m {m = $2} END {print m}')
  echo "captures $n, pairs $pairs, $(du -sh "$out/ds" | cut -f1) on disk"
  echo "sim+append wall $(echo "$b - $a" | bc) s with $jobs at once;" \
    "report+append $report_s s summed over captures ($(echo "$pairs / $report_s" | bc) pairs/s per process)," \
    "peak RSS of one report+append $report_rss KiB"
fi

/usr/bin/time -f "$tf" -o "$out/fleet.time" \
  "$BIN" fleet "$out/ds" --group-by soc,pm_qos --format json -o "$out/fleet.json"
echo "latscope fleet --group-by soc,pm_qos: $(cat "$out/fleet.time")"
# Without --group-by every analysis is one group of all captures: the largest groups, where
# more than 2^22 pairs take the radix selection's extra scans.
/usr/bin/time -f "$tf" -o "$out/fleet-all.time" \
  "$BIN" fleet "$out/ds" --format json -o "$out/fleet-all.json"
echo "latscope fleet (one group): $(cat "$out/fleet-all.time")"

if python3 -c 'import datafusion' 2>/dev/null; then
  /usr/bin/time -f "$tf" -o "$out/df.time" \
    python3 "$here/bench/fleet_datafusion_check.py" "$here/docs/FLEET.md" "$out/ds" "$out/fleet.json"
  echo "datafusion process: $(cat "$out/df.time")"
fi
