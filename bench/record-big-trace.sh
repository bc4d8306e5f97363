#!/bin/bash
# Record the big benchmark inputs on this machine (they are NOT committed).
#   sudo bench/record-big-trace.sh [OUT_DIR]        (default: target/bench-data/)
# Writes into OUT_DIR:
#   ftrace_big.txt      tracefs `trace` text, ~350k irq/sched/timer/block events (~40 MB)
#   trace_big_v7.dat    the same ring buffer, `trace-cmd extract` (file version 7, zstd)
#   trace_big_v6.dat    the same, `trace-cmd convert --file-version 6 --compression none`
#   RECORDING.txt       kernel, date, events, counts and sizes
# Environment: TARGET_EVENTS (default 350000) stops the load once the ring buffer holds
# that many events; MAX_SECONDS (default 30) bounds the load in any case; BUF_KB (default
# 65536) is the per-CPU tracefs buffer used meanwhile (the old size is restored).
#
# Why not `trace-cmd record`: on the project's build VM it fails ("Can't enable ftrace",
# /proc/sys/kernel/ftrace_enabled is read-only there), so the events are recorded through
# tracefs, and trace-cmd only extracts/converts the buffer. This also makes the text and
# the .dat files hold exactly the same events.
set -euo pipefail

out=${1:-target/bench-data}
TARGET_EVENTS=${TARGET_EVENTS:-350000}
MAX_SECONDS=${MAX_SECONDS:-30}
BUF_KB=${BUF_KB:-65536}
T=/sys/kernel/tracing
SCRATCH=$(mktemp /var/tmp/latscope-bench.XXXXXX)

[ "$(id -u)" = 0 ] || { echo "record-big-trace.sh: needs root (tracefs)" >&2; exit 1; }
command -v trace-cmd >/dev/null || { echo "record-big-trace.sh: trace-cmd is not installed" >&2; exit 1; }
mountpoint -q $T || mount -t tracefs nodev $T
mkdir -p "$out"

EVENTS=(irq/irq_handler_entry irq/irq_handler_exit
        irq/softirq_raise irq/softirq_entry irq/softirq_exit
        sched/sched_waking sched/sched_wakeup sched/sched_switch
        timer/hrtimer_start timer/hrtimer_cancel timer/hrtimer_expire_entry timer/hrtimer_expire_exit
        timer/timer_start timer/timer_cancel timer/timer_expire_entry timer/timer_expire_exit
        block/block_rq_insert block/block_rq_issue block/block_rq_complete
        power/cpu_idle)

old_buf=$(sed 's/ .*//' $T/buffer_size_kb)
load_pids=()
cleanup() {
    local p
    for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    echo 0 > $T/tracing_on || true
    echo 0 > $T/events/enable || true
    echo > $T/trace || true
    echo "$old_buf" > $T/buffer_size_kb || true
    echo 1 > $T/tracing_on || true
    rm -f "$SCRATCH"
}
trap cleanup EXIT

echo "creating a 128 MiB scratch file $SCRATCH"
dd if=/dev/urandom of="$SCRATCH" bs=1M count=128 status=none
sync

echo 0 > $T/tracing_on
echo 0 > $T/events/enable
echo "$BUF_KB" > $T/buffer_size_kb
echo > $T/trace
for e in "${EVENTS[@]}"; do
    if [ -e "$T/events/$e/enable" ]; then echo 1 > "$T/events/$e/enable"
    else echo "note: event $e not available on this kernel, skipped"; fi
done

entries() { # events currently in the ring buffer, all CPUs
    awk '/^entries:/ { n += $2 } END { print n + 0 }' $T/per_cpu/cpu*/stats
}

echo 1 > $T/tracing_on
t0=$(date +%s.%N)
# Load, every part bounded by `timeout`: direct reads, a 1 ms sleeper, a CPU loop.
timeout "$MAX_SECONDS" sh -c 'while :; do dd if="$1" of=/dev/null bs=64k iflag=direct status=none; done' sh "$SCRATCH" &
load_pids+=($!)
timeout "$MAX_SECONDS" python3 -c 'import time
while True: time.sleep(0.001)' &
load_pids+=($!)
timeout "$MAX_SECONDS" sh -c 'while :; do :; done' &
load_pids+=($!)

while :; do
    sleep 0.5
    n=$(entries)
    el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    printf '\r  %s s, %s events in the buffer' "$el" "$n"
    if [ "$n" -ge "$TARGET_EVENTS" ] || awk -v e="$el" -v m="$MAX_SECONDS" 'BEGIN { exit !(e >= m) }'; then
        break
    fi
done
echo 0 > $T/tracing_on
echo
for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
load_pids=()

echo "writing $out/ftrace_big.txt"
cat $T/trace > "$out/ftrace_big.txt"
echo "writing $out/trace_big_v7.dat (trace-cmd extract)"
rm -f "$out/trace_big_v7.dat" "$out/trace_big_v6.dat"
trace-cmd extract -o "$out/trace_big_v7.dat" >/dev/null
echo 0 > $T/events/enable
echo "writing $out/trace_big_v6.dat (trace-cmd convert)"
# (convert prints per-CPU offsets and a harmless "Cannot find description for buffer" on
# stderr; show them only if it fails)
if ! log=$(trace-cmd convert --file-version 6 --compression none \
        -i "$out/trace_big_v7.dat" -o "$out/trace_big_v6.dat" 2>&1); then
    echo "$log" >&2; echo "record-big-trace.sh: trace-cmd convert failed" >&2; exit 1
fi

txt_n=$(grep -vc '^#' "$out/ftrace_big.txt" || true)
v7_n=$(trace-cmd report "$out/trace_big_v7.dat" 2>/dev/null | grep -vc '^cpus=' || true)
v6_n=$(trace-cmd report "$out/trace_big_v6.dat" 2>/dev/null | grep -vc '^cpus=' || true)
{
    echo "recorded $(date -u +%FT%TZ) on $(uname -n), kernel $(uname -r), $(nproc) CPUs"
    echo "trace-cmd: $(trace-cmd --version 2>&1 | grep -m1 version)"
    echo "events: ${EVENTS[*]}"
    echo "load: dd bs=64k iflag=direct loop over a 128 MiB file + python 1 ms sleeper + sh CPU loop, ${el}s"
    grep -m1 entries-in-buffer "$out/ftrace_big.txt" || true
    printf '%-20s %12s bytes %9s events\n' \
        ftrace_big.txt "$(stat -c %s "$out/ftrace_big.txt")" "$txt_n" \
        trace_big_v7.dat "$(stat -c %s "$out/trace_big_v7.dat")" "$v7_n" \
        trace_big_v6.dat "$(stat -c %s "$out/trace_big_v6.dat")" "$v6_n"
} | tee "$out/RECORDING.txt"
if [ "$txt_n" -lt 300000 ] || [ "$v7_n" -lt 300000 ] || [ "$v6_n" -lt 300000 ]; then
    echo "warning: fewer than 300k events; raise MAX_SECONDS or BUF_KB" >&2
fi
