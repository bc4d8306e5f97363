#!/bin/sh
# docs/guide/query.md — your own questions, in SQL, over a real trace's tables.
. "$(dirname "$0")/prelude.sh"
# --- steps (the guide shows exactly these lines) ---
latscope query "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --sql "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC" --format csv -o counts.csv
latscope query "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --sql "SELECT count(*) AS n, quantile_cont(latency_ns, 0.5) AS p50_ns, quantile_cont(latency_ns, 0.99) AS p99_ns FROM pairs" --format json -o block.json
latscope query "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --sql "SELECT i.sector, i.nr_sector, p.latency_ns FROM pairs p JOIN block_rq_issue i ON p.start_s = i.time_s ORDER BY p.latency_ns DESC LIMIT 5" --format csv -o slowest.csv
latscope query "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --sql "SELECT * FROM block_rq_issue" -o issues.parquet
latscope report "$SAMPLES/ftrace/virtio_blk_direct_read.dat" --preset block --format json -o report.json
