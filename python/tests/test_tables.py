"""The Python API's tables equal what `latscope query` writes for the same files: the events,
every per-event table, and queries, on the sample traces and the corpus. The oracle is the
command line, read back from its Parquet output (the column types as built)."""

from __future__ import annotations

import pathlib

import latscope
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from conftest import ROOT, SAMPLES, cli_parquet, need, needs_shared_corpus, shared_corpus

# Every trace.dat of the samples and the repository's corpus, and one capture of each other
# kind the events table has rows for (ftrace text, Perfetto).
TRACES = sorted(SAMPLES.glob("ftrace/*.dat")) + sorted(SAMPLES.glob("corpus/tracedat/*.dat")) + [
    SAMPLES / "ftrace/virtio_blk_direct_read.txt",
    SAMPLES / "corpus/ftrace_text/trappy_juno_thermal_ipa.txt",
    SAMPLES / "corpus/perfetto/systing_compact_sched_irq.pb",
]


def rel(path: pathlib.Path) -> str:
    """The path as the tests type it (relative to the repository, where the CLI runs), so
    both name the source alike."""
    return str(path.relative_to(ROOT))


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_there_are_traces_to_compare():
    assert len(TRACES) >= 10
    for t in TRACES:
        need(t)


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_events_equal_the_query_of_every_event(trace, tmp_path):
    cap = latscope.open(rel(trace))
    ours = cap.events()
    theirs = cli_parquet(tmp_path, rel(trace), "--sql", "SELECT * FROM events")
    assert ours.height > 0
    assert ours.columns == ["source", "time_s", "time_ps", "cpu", "pid", "comm", "name"]
    assert_frame_equal(ours, theirs)


@needs_shared_corpus()
def test_events_equal_the_query_on_the_shared_corpus_traces(tmp_path):
    corpus = shared_corpus()
    assert corpus is not None, "needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS"
    traces = sorted(corpus.glob("tracedat/*.dat"))
    assert traces, f"no trace.dat in {corpus}/tracedat"
    for trace in traces:
        ours = latscope.open(str(trace)).events()
        theirs = cli_parquet(tmp_path, str(trace), "--sql", "SELECT * FROM events")
        assert_frame_equal(ours, theirs)


def test_every_event_table_equals_the_query_of_it(tmp_path):
    trace = rel(SAMPLES / "ftrace/virtio_blk_direct_read.dat")
    cap = latscope.open(trace)
    names = cap.tables()
    fixed = ["events", "pairs", "windows", "annotations", "edges", "tracks"]
    assert names[:6] == fixed
    events = names[6:]
    assert "block_rq_issue" in events and len(events) >= 5, events
    # Every event name of the trace is a table, and no other.
    assert sorted(events) == sorted(cap.events()["name"].unique().to_list())
    for name in events:
        ours = cap.table(name)
        theirs = cli_parquet(tmp_path, trace, "--sql", f'SELECT * FROM "{name}"')
        assert_frame_equal(ours, theirs)
    issue = cap.table("block_rq_issue")
    assert issue.schema["sector"] == pl.UInt64
    assert issue.height == cap.events().filter(pl.col("name") == "block_rq_issue").height


@pytest.mark.parametrize("table", ["tracks", "edges"])
def test_fixed_tables_equal_the_query_on_a_logic_capture(table, tmp_path):
    sr = rel(SAMPLES / "corpus/sigrok/sd_rcarh2_cmd23_cmd18.sr")
    ours = latscope.open(sr).table(table)
    theirs = cli_parquet(tmp_path, sr, "--sql", f"SELECT * FROM {table}")
    assert ours.height > 0
    assert_frame_equal(ours, theirs)


QUERIES = [
    "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC, name",
    "SELECT cpu, min(time_s) AS first, max(time_ps) AS last FROM events GROUP BY cpu ORDER BY cpu",
    "SELECT dev, sector, nr_sector, comm FROM block_rq_issue WHERE nr_sector > 8 ORDER BY sector LIMIT 20",
    "SELECT analysis, count(*) AS n, avg(latency_ns) AS mean_ns FROM pairs GROUP BY analysis ORDER BY analysis",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_queries_equal_the_command_line(sql, tmp_path):
    trace = rel(SAMPLES / "ftrace/virtio_blk_direct_read.dat")
    ours = latscope.open(trace).query(sql)
    theirs = cli_parquet(tmp_path, trace, "--sql", sql)
    assert ours.height > 0
    assert_frame_equal(ours, theirs)


def test_a_query_with_named_analyses_equals_the_command_line(tmp_path):
    trace = rel(SAMPLES / "ftrace/virtio_blk_direct_read.dat")
    sql = "SELECT analysis, key, latency_ns FROM pairs ORDER BY latency_ns DESC LIMIT 10"
    rule = "rq=block_rq_issue -> block_rq_complete by dev,sector"
    ours = latscope.open(trace).query(sql, analyses=["irq-handler", rule])
    theirs = cli_parquet(tmp_path, trace, "--sql", sql, "--preset", "irq-handler", "--rule", rule)
    assert set(ours["analysis"]) <= {"irq-handler", "rq"}
    assert_frame_equal(ours, theirs)


def test_two_aligned_files_equal_the_command_line(tmp_path):
    a = rel(SAMPLES / "ftrace/virtio_blk_direct_read.dat")
    b = rel(SAMPLES / "ftrace/virtio_blk_direct_read.txt")
    cap = latscope.open([a, b], align="1:+5ms")
    assert cap.sources == [a, b]
    ours = cap.events()
    theirs = cli_parquet(tmp_path, a, b, "--align", "1:+5ms", "--sql", "SELECT * FROM events")
    assert_frame_equal(ours, theirs)
    assert set(ours["source"]) == {a, b}


def test_paths_may_be_path_objects():
    trace = SAMPLES / "ftrace/virtio_blk_direct_read.dat"
    by_str = latscope.open(str(trace)).events()
    by_path = latscope.open(trace).events()
    assert_frame_equal(by_str, by_path)
