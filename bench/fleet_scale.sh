#!/usr/bin/env bash
# A synthetic fleet for docs/PERFORMANCE.md (issue 21): N captures of the simulator's
# imx8mq-cpuidle scenario, its settings (soc, idle probability, PM QoS) and a commit as
# labels, each analysed and appended with `latscope report --dataset`; then
# `latscope fleet --group-by` timed with /usr/bin/time -v, and the same query in DataFusion.
#
# usage: bench/fleet_scale.sh N [OUT_DIR]   (DUR=simulated time per capture, default 1s)
set -euo pipefail
n=${1:?usage: bench/fleet_scale.sh N [OUT_DIR]}
out=${2:-/tmp/latscope-fleet-$n}
dur=${DUR:-1s}
bin=${BIN:-target/release/latscope}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/traces"
socs=(imx8mq imx93)
idle=(0.25 0.8)
qos=(on off)
append_s=0
for i in $(seq 1 "$n"); do
  soc=${socs[$((i % 2))]}
  ip=${idle[$((i / 2 % 2))]}
  q=${qos[$((i / 4 % 2))]}
  commit=c$(printf %02d $(((i - 1) * 10 / n)))
  t="$out/traces/c$i.txt"
  "$bin" sim imx8mq-cpuidle --set "soc=$soc" --set "idle_probability=$ip" --set "pm_qos=$q" \
    --seed "$i" --duration "$dur" -o "$t" --format json >/dev/null
  a=$(date +%s.%N)
  "$bin" report "$t" --preset irq-handler --preset block --preset wakeup --format json \
    --dataset "$out/ds" --label "soc=$soc" --label "idle=$ip" --label "pm_qos=$q" \
    --label "commit=$commit" >/dev/null 2>>"$out/append.log"
  b=$(date +%s.%N)
  append_s=$(echo "$append_s + $b - $a" | bc)
  rm -f "$t"
done
pairs=$(grep -o '([0-9]* pairs)' "$out/append.log" | tr -dc '0-9\n' | paste -sd+ | bc)
echo "captures $n pairs $pairs report+append ${append_s}s ($(echo "$pairs / $append_s" | bc) pairs/s)"
du -sh "$out/ds"
/usr/bin/time -v "$bin" fleet "$out/ds" --group-by soc,pm_qos --format json -o "$out/fleet.json" \
  2>"$out/fleet.time"
grep -E 'Elapsed|Maximum resident' "$out/fleet.time"
cat > "$out/df.py" <<PY
import time
from datafusion import SessionContext
ctx = SessionContext()
for t in ("pairs", "captures"):
    ctx.sql(f"CREATE EXTERNAL TABLE {t} STORED AS PARQUET LOCATION '$out/ds/{t}/' PARTITIONED BY (day)").collect()
q = """WITH ranked AS (SELECT soc, pm_qos, analysis, latency_ns,
  ROW_NUMBER() OVER (PARTITION BY soc, pm_qos, analysis ORDER BY latency_ns) - 1 AS r,
  COUNT(*) OVER (PARTITION BY soc, pm_qos, analysis) AS n
  FROM pairs WHERE capture IN (SELECT capture FROM captures)),
ps AS (SELECT * FROM (VALUES (0.5), (0.9), (0.99), (0.999)) AS t(p))
SELECT soc, pm_qos, analysis, p,
  MAX(CASE WHEN r = FLOOR(p * (n - 1)) THEN latency_ns END) AS lo,
  MAX(CASE WHEN r = CEIL(p * (n - 1)) THEN latency_ns END) AS hi
FROM ranked CROSS JOIN ps WHERE r = FLOOR(p * (n - 1)) OR r = CEIL(p * (n - 1))
GROUP BY soc, pm_qos, analysis, p"""
a = time.time(); r = ctx.sql(q).collect(); b = time.time()
print(f"datafusion groups {sum(x.num_rows for x in r)} in {b - a:.2f} s")
PY
/usr/bin/time -v python3 "$out/df.py" 2>"$out/df.time"
grep -E 'Elapsed|Maximum resident' "$out/df.time"
