"""Runs the SQL blocks of docs/FLEET.md with Apache DataFusion in local mode on a dataset
and prints their results as JSON: {"groups": [...], "ranks": [...], "worst": [...]}.

usage: fleet_datafusion.py DOCS_FLEET_MD DATASET_DIR
"""
import json
import re
import sys

from datafusion import SessionContext


def blocks(markdown):
    found = dict(re.findall(r"```sql ([\w-]+)\n(.*?)```", markdown, flags=re.S))
    for name in ("fleet-groups", "fleet-percentiles-by-rank", "fleet-worst"):
        if name not in found:
            sys.exit(f"docs/FLEET.md has no ```sql {name} block")
    return found


def rows(ctx, sql):
    table = ctx.sql(sql).to_arrow_table()
    return table.to_pylist()


def main():
    doc, dataset = sys.argv[1], sys.argv[2].rstrip("/")
    sql = blocks(open(doc, encoding="utf-8").read())
    ctx = SessionContext()
    for table in ("pairs", "captures"):
        ctx.sql(
            f"CREATE EXTERNAL TABLE {table} STORED AS PARQUET "
            f"LOCATION '{dataset}/{table}/' PARTITIONED BY (day)"
        ).collect()
    out = {
        "groups": rows(ctx, sql["fleet-groups"]),
        "ranks": rows(ctx, sql["fleet-percentiles-by-rank"]),
        "worst": rows(ctx, sql["fleet-worst"]),
    }
    json.dump(out, sys.stdout, default=str)


main()
