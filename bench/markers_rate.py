# markers_rate.py SECONDS RATE: RATE requests a second for SECONDS, each a `req_start id=N`
# and a `req_done id=N` written to trace_marker (one write each).
import sys, time
secs, rate = float(sys.argv[1]), int(sys.argv[2])
m = open('/sys/kernel/tracing/trace_marker', 'w', buffering=1)
start = time.monotonic(); i = 0
while True:
    now = time.monotonic() - start
    if now >= secs:
        break
    due = int(now * rate)
    while i < due:
        i += 1
        m.write(f'req_start id={i}\n'); m.write(f'req_done id={i}\n')
    time.sleep(0.001)
