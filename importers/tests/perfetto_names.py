"""Oracle for importers/tests/perfetto_names.rs: what Perfetto's published protos
(PyPI `perfetto`, `perfetto_trace_pb2`) say about a trace, decoded by Google's protobuf
runtime. Prints JSON:

- `packet_data` / `ftrace_events`: the `data` oneof of TracePacket and the `event` oneof of
  FtraceEvent, field number -> name;
- `packets`: per TracePacket data type (its name, or `field N` when the published protos
  lack it), how many packets hold it;
- `thread_names`: per tid, every name the trace gives it (process trees, process, thread and
  track descriptors, and the comm fields of ftrace events, compact sched included).
"""
import json
import sys
from collections import Counter, defaultdict

from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

tp = pb.TracePacket.DESCRIPTOR
fe = pb.FtraceEvent.DESCRIPTOR
out = {
    "packet_data": {f.number: f.name for f in tp.oneofs_by_name["data"].fields},
    "ftrace_events": {f.number: f.name for f in fe.oneofs_by_name["event"].fields},
}
if len(sys.argv) > 1:
    trace = pb.Trace()
    with open(sys.argv[1], "rb") as f:
        trace.ParseFromString(f.read())
    packets = Counter()
    names = defaultdict(set)
    data_numbers = set(out["packet_data"])

    def add(tid, name):
        if name:
            names[int(tid)].add(name.decode() if isinstance(name, bytes) else name)

    for p in trace.packet:
        which = p.WhichOneof("data")
        if which is None:
            # A data field the published protos lack: name it by number.
            for field in UnknownFieldSet(p):
                if field.field_number not in data_numbers:
                    packets["field %d" % field.field_number] += 1
                    break
            continue
        packets[which] += 1
        if which == "process_tree":
            for pr in p.process_tree.processes:
                if pr.cmdline:
                    add(pr.pid, pr.cmdline[0].rsplit("/", 1)[-1])
            for th in p.process_tree.threads:
                add(th.tid, th.name)
        elif which == "track_descriptor":
            d = p.track_descriptor
            if d.HasField("thread") and d.thread.HasField("thread_name"):
                add(d.thread.tid, d.thread.thread_name)
            if d.HasField("process") and d.process.HasField("process_name"):
                add(d.process.pid, d.process.process_name)
        elif which == "process_descriptor":
            d = p.process_descriptor
            add(d.pid, d.process_name if d.HasField("process_name") else (d.cmdline[0] if d.cmdline else ""))
        elif which == "thread_descriptor":
            add(p.thread_descriptor.tid, p.thread_descriptor.thread_name)
        elif which == "ftrace_events":
            b = p.ftrace_events
            for e in b.event:
                kind = e.WhichOneof("event")
                if kind is None:
                    continue
                ev = getattr(e, kind)
                for comm, pid in [("comm", "pid"), ("prev_comm", "prev_pid"), ("next_comm", "next_pid"), ("newcomm", "pid")]:
                    if hasattr(ev, comm) and hasattr(ev, pid):
                        add(getattr(ev, pid), getattr(ev, comm))
            if b.HasField("compact_sched"):
                cs = b.compact_sched
                table = list(cs.intern_table)
                for pid, idx in zip(cs.switch_next_pid, cs.switch_next_comm_index):
                    if idx < len(table):
                        add(pid, table[idx])
                for pid, idx in zip(cs.waking_pid, cs.waking_comm_index):
                    if idx < len(table):
                        add(pid, table[idx])
    out["packets"] = dict(packets)
    out["thread_names"] = {tid: sorted(n) for tid, n in names.items()}
print(json.dumps(out))
