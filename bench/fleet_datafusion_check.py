#!/usr/bin/env python3
"""Runs docs/FLEET.md's group and percentile SQL in DataFusion on a fleet dataset grouped by
soc and pm_qos (bench/fleet_scale.sh's labels), and compares every group's count and
p50/p90/p99/p99.9 with `latscope fleet --group-by soc,pm_qos --format json` output.

Usage: bench/fleet_datafusion_check.py docs/FLEET.md DATASET FLEET_JSON
Exits 1 when a count differs or a percentile is NULL. DF_MEMORY_GB=N caps DataFusion's
memory pool at N GiB (its sorts then spill to disk) so that a large dataset does not take
the machine's memory.
"""
import os
import json
import re
import sys
import time

import datafusion
from datafusion import RuntimeEnvBuilder, SessionConfig, SessionContext

doc, ds, fleet = sys.argv[1], sys.argv[2], sys.argv[3]
sql = dict(re.findall(r"```sql ([\w-]+)\n(.*?)```", open(doc).read(), flags=re.S))
limit = os.environ.get("DF_MEMORY_GB")
if limit:
    runtime = RuntimeEnvBuilder().with_disk_manager_os().with_fair_spill_pool(int(float(limit) * 2**30))
    ctx = SessionContext(SessionConfig(), runtime)
else:
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
names = {0.5: "p50", 0.9: "p90", 0.99: "p99", 0.999: "p999"}
nulls = [r for r in ranks if r["value"] is None]
worst = max(
    (abs(ours[(r["soc"], r["pm_qos"], r["analysis"])]["stats_ns"][names[r["p"]]] - r["value"]) / max(abs(r["value"]), 1.0)
     for r in ranks if r["value"] is not None),
    default=0.0,
)
print(f"datafusion {datafusion.__version__} groups+percentiles: {b - a:.2f} s wall; {len(groups)} groups, "
      f"counts equal: {same}; {len(ranks)} percentiles, {len(nulls)} NULL, largest difference {worst:.1e} relative")
for r in nulls:
    print("NULL:", r)
sys.exit(0 if same and not nulls else 1)
