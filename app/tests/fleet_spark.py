"""Runs the SQL blocks of docs/FLEET.md on Apache Spark in local-cluster mode (a driver and
two executor JVMs, one core and 1 GiB each, talking over loopback) on a dataset, and prints
their results as JSON: {"groups": [...], "ranks": [...], "spark": [...], "worst": [...],
"executors": N, "seconds": {...}}. One SparkSession runs every query.

usage: fleet_spark.py DOCS_FLEET_MD DATASET_DIR
"""
import json
import re
import sys
import time

from pyspark.sql import SparkSession

BLOCKS = ("fleet-groups", "fleet-percentiles-by-rank", "fleet-worst", "spark-percentiles")


def blocks(markdown):
    found = dict(re.findall(r"```sql ([\w-]+)\n(.*?)```", markdown, flags=re.S))
    for name in BLOCKS:
        if name not in found:
            sys.exit(f"docs/FLEET.md has no ```sql {name} block")
    return found


def main():
    doc, dataset = sys.argv[1], sys.argv[2].rstrip("/")
    sql = blocks(open(doc, encoding="utf-8").read())
    started = time.monotonic()
    spark = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("latscope-fleet-test")
        # Loopback only: the driver, the master and both workers bind to 127.0.0.1.
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # `day=2026-12-02` stays text, as docs/FLEET.md's schema says.
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    up = time.monotonic()
    for table in ("pairs", "captures"):
        (
            spark.read.option("mergeSchema", "true")
            .option("basePath", f"{dataset}/{table}")
            .parquet(f"{dataset}/{table}")
            .createOrReplaceTempView(table)
        )
    # Block managers: the driver's and one per executor JVM.
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    out = {}
    seconds = {"start": up - started}
    for key, name in (("groups", "fleet-groups"), ("ranks", "fleet-percentiles-by-rank"),
                      ("worst", "fleet-worst"), ("spark", "spark-percentiles")):
        t = time.monotonic()
        out[key] = [row.asDict(recursive=True) for row in spark.sql(sql[name]).collect()]
        seconds[name] = time.monotonic() - t
    spark.stop()
    out["executors"] = executors
    out["seconds"] = seconds
    json.dump(out, sys.stdout, default=float)


main()
