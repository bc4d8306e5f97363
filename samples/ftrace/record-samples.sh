#!/bin/bash
# Re-record the ftrace samples in this directory on the current machine.
#   sudo samples/ftrace/record-samples.sh [NAME...]    (default: all)
# NAME is one of: blk timer markers pipe versions tgid async.
# Needs root, tracefs, trace-cmd (3.x) and python3. It writes into the directory of this
# script, uses a 64 MiB scratch file under /var/tmp (removed at the end) and keeps every
# load generator bounded in time (at most a few seconds).
set -euo pipefail
cd "$(dirname "$0")"
T=/sys/kernel/tracing
CAP=${CAPTURE_FTRACE:-/work/shared/tools/capture-ftrace.sh}
SCRATCH=/var/tmp/latscope-blk.bin
mountpoint -q $T || mount -t tracefs nodev $T
old_buf=$(sed 's/ .*//' $T/buffer_size_kb)

cleanup() {
    echo 0 > $T/tracing_on || true
    echo 0 > $T/events/enable || true
    echo 0 > $T/options/record-tgid || true
    echo "$old_buf" > $T/buffer_size_kb || true
    echo > $T/trace || true
    echo 1 > $T/tracing_on || true
    rm -f "$SCRATCH" /tmp/latscope-empty-kallsyms
    rm -rf /tmp/latscope-events
}
trap cleanup EXIT

[ -f "$SCRATCH" ] || { dd if=/dev/urandom of="$SCRATCH" bs=1M count=64 status=none; sync; }

# The block/IRQ/scheduler event set of the main sample (for the block, irq-handler,
# wakeup, idle and cmd-irq presets).
BLK_EVENTS=(block/block_rq_issue block/block_rq_complete block/block_rq_insert
            irq/irq_handler_entry irq/irq_handler_exit
            sched/sched_waking sched/sched_wakeup sched/sched_switch power/cpu_idle)

# A request loop in python: marker "req_start id=N", one 64 KiB O_DIRECT pread, marker
# "req_done id=N". With MARK=0 it only does the reads.
req_loop() { # N MARK
    python3 - "$SCRATCH" "$1" "$2" <<'EOF'
import mmap, os, sys
path, n, mark = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 65536)            # page aligned, as O_DIRECT wants
m = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY) if mark else None
size = os.fstat(fd).st_size
for i in range(1, n + 1):
    off = (i * 7919 * 65536) % size  # spread over the file
    if m is not None: os.write(m, b"req_start id=%d" % i)
    os.preadv(fd, [buf], off)
    if m is not None: os.write(m, b"req_done id=%d" % i)
EOF
}
export -f req_loop; export SCRATCH

rec_blk() {
    "$CAP" virtio_blk_direct_read.txt "${BLK_EVENTS[@]}" -- \
        dd if="$SCRATCH" of=/dev/null bs=64k iflag=direct count=400
}

rec_timer() {
    "$CAP" timer_wakeups_under_load.txt \
        timer/hrtimer_setup timer/hrtimer_start timer/hrtimer_cancel \
        timer/hrtimer_expire_entry timer/hrtimer_expire_exit \
        timer/timer_init timer/timer_start timer/timer_cancel \
        timer/timer_expire_entry timer/timer_expire_exit \
        irq/irq_handler_entry irq/irq_handler_exit \
        irq/softirq_entry irq/softirq_exit irq/softirq_raise \
        irq_vectors/local_timer_entry irq_vectors/local_timer_exit \
        irq_vectors/reschedule_entry irq_vectors/reschedule_exit \
        sched/sched_wakeup sched/sched_switch -- \
        sh -c 'timeout 1.5 taskset -c 1 sh -c "while :; do :; done" &
               python3 -c "import time
for _ in range(500): time.sleep(0.001)"
               wait'
}

rec_markers() {
    "$CAP" markers_around_requests.txt \
        block/block_rq_issue block/block_rq_complete block/block_rq_insert \
        irq/irq_handler_entry irq/irq_handler_exit -- req_loop 300 1
}

rec_pipe() {
    # trace_pipe dialect: no header, consumed as it is read.
    echo 0 > $T/tracing_on; echo 0 > $T/events/enable; echo > $T/trace
    for e in block/block_rq_issue block/block_rq_complete irq/irq_handler_entry \
             irq/irq_handler_exit sched/sched_wakeup sched/sched_switch; do
        echo 1 > $T/events/$e/enable
    done
    timeout 4 cat $T/trace_pipe > virtio_blk_direct_read_pipe.txt &
    local cat_pid=$!
    sleep 0.5
    echo 1 > $T/tracing_on
    dd if="$SCRATCH" of=/dev/null bs=64k iflag=direct count=200 status=none
    echo 0 > $T/tracing_on
    wait $cat_pid || true       # timeout ends cat with status 124
    echo 0 > $T/events/enable; echo > $T/trace
}

# Writes the capture in the ring buffer as trace.dat $1 (v7, zstd) with only the formats of
# events $2... (plus ftrace/* and the headers) and no kallsyms: what `trace-cmd record -e
# ...` would store. `trace-cmd record` cannot run on this machine (it fails with "Can't
# enable ftrace": /proc/sys/kernel/ftrace_enabled is not writable here) and `trace-cmd
# extract` stores the formats of every event system and the whole /proc/kallsyms, so
# extract runs in a private mount namespace where /proc/kallsyms is an empty file and
# events/ holds only those formats. Event data are untouched.
extract_small() {
    local out=$1 ev=/tmp/latscope-events e d; shift
    rm -rf $ev; mkdir -p $ev; cp $T/events/header_page $T/events/header_event $ev/
    for d in "${@/#/$T/events/}" $T/events/ftrace/*; do
        [ -f "$d/format" ] || continue
        e=${d#$T/events/}; mkdir -p "$ev/$e"; cp "$d/format" "$ev/$e/"
    done
    : > /tmp/latscope-empty-kallsyms
    unshare -m --propagation private sh -c '
        mount --bind /tmp/latscope-empty-kallsyms /proc/kallsyms
        mount --bind "$1" /sys/kernel/tracing/events
        trace-cmd extract -o "$2" >/dev/null' sh $ev "$out"
    rm -rf $ev
}

rec_versions() {
    # One capture, written as trace.dat file version 7 (zstd), 7 (uncompressed) and 6
    # (`trace-cmd extract` ignores --file-version: the others come from `trace-cmd convert`).
    local e
    echo 0 > $T/tracing_on; echo 0 > $T/events/enable; echo > $T/trace
    for e in "${BLK_EVENTS[@]}"; do echo 1 > $T/events/$e/enable; done
    echo 1 > $T/tracing_on
    dd if="$SCRATCH" of=/dev/null bs=64k iflag=direct count=300 status=none
    echo 0 > $T/tracing_on
    cat $T/trace > blk_read.txt
    extract_small blk_read_v7_zstd.dat "${BLK_EVENTS[@]}"
    echo 0 > $T/events/enable; echo > $T/trace
    trace-cmd convert --file-version 6 --compression none -i blk_read_v7_zstd.dat -o blk_read_v6.dat >/dev/null
    trace-cmd convert --file-version 7 --compression none -i blk_read_v7_zstd.dat -o blk_read_v7_none.dat >/dev/null
    trace-cmd report blk_read_v7_zstd.dat > blk_read_v7_zstd.report.txt
    trace-cmd report -l blk_read_v7_zstd.dat > blk_read_v7_zstd.report-l.txt
}

rec_tgid() {
    # The record-tgid variant of the text header/lines.
    echo 1 > $T/options/record-tgid
    "$CAP" virtio_blk_direct_read_tgid.txt block/block_rq_issue block/block_rq_complete \
        irq/irq_handler_entry irq/irq_handler_exit sched/sched_wakeup sched/sched_switch -- \
        dd if="$SCRATCH" of=/dev/null bs=64k iflag=direct count=100 status=none
    echo 0 > $T/options/record-tgid
    rm -f virtio_blk_direct_read_tgid.dat
}

rec_async() {
    # Asynchronous dispatch: 48 direct readers at once ask for more requests than the
    # device takes, so some wait in the I/O scheduler and are issued by kblockd
    # (kworker/N:1H) or by another reader when a completion frees room, while their own
    # reader sleeps on them. The completion wakes the reader, not the issuer.
    local e events=(block/block_rq_issue block/block_rq_complete block/block_rq_insert
                    irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit
                    sched/sched_waking sched/sched_wakeup sched/sched_switch)
    echo 0 > $T/tracing_on; echo 0 > $T/events/enable; echo > $T/trace
    for e in "${events[@]}"; do echo 1 > $T/events/$e/enable; done
    echo 1 > $T/tracing_on
    for i in $(seq 0 47); do
        dd if="$SCRATCH" of=/dev/null bs=64k count=40 skip=$((i * 20)) iflag=direct status=none &
    done
    wait
    echo 0 > $T/tracing_on
    cat $T/trace > async_dispatch_direct_reads.txt
    extract_small async_dispatch_direct_reads.dat "${events[@]}"
    echo 0 > $T/events/enable; echo > $T/trace
}

names=("$@"); [ ${#names[@]} -gt 0 ] || names=(blk timer markers pipe versions tgid async)
for n in "${names[@]}"; do echo "== $n"; "rec_$n"; done
