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
  /usr/bin/time -f "$tf" -o "$out/df.time" python3 - "$here/docs/FLEET.md" "$out/ds" "$out/fleet.json" <<'PY'
import json, re, sys, time
from datafusion import SessionContext
doc, ds, fleet = sys.argv[1], sys.argv[2], sys.argv[3]
sql = dict(re.findall(r"```sql ([\w-]+)\n(.*?)```", open(doc).read(), flags=re.S))
ctx = SessionContext()
for t in ("pairs", "captures"):
    ctx.sql(f"CREATE EXTERNAL TABLE {t} STORED AS PARQUET LOCATION '{ds}/{t}/' PARTITIONED BY (day)").collect()
by = lambda q: q.replace("board, kernel", "soc, pm_qos")
a = time.time()
groups = ctx.sql(by(sql["fleet-groups"])).to_pylist()
ranks = ctx.sql(by(sql["fleet-percentiles-by-rank"])).to_pylist()
b = time.time()
ours = {(g["labels"]["soc"], g["labels"]["pm_qos"], g["analysis"]): g for g in json.load(open(fleet))["groups"]}
same = all(ours[(g["soc"], g["pm_qos"], g["analysis"])]["count"] == g["count"] for g in groups)
p99 = [r for r in ranks if abs(r["p"] - 0.99) < 1e-12]
worst = max(abs(ours[(r["soc"], r["pm_qos"], r["analysis"])]["stats_ns"]["p99"] - r["value"])
            / max(abs(r["value"]), 1.0) for r in p99)
print(f"datafusion groups+percentiles: {b - a:.2f} s wall; {len(groups)} groups, counts equal: {same}, "
      f"largest p99 difference {worst:.1e} relative")
PY
  echo "datafusion process: $(cat "$out/df.time")"
fi
