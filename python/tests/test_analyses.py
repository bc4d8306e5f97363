"""`.pairs`, `.decode` and `latscope.sim` against the command line: the statistics of the pairs
are `latscope report`'s, the annotations `latscope decode`'s, and a dotted setting changes a
simulated run as `latscope sim --set` does."""

from __future__ import annotations

import json
import math

import latscope
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from conftest import ROOT, SAMPLES, cli, cli_json, cli_parquet

VIRTIO = "samples/ftrace/virtio_blk_direct_read.dat"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def stats_of(pairs: pl.DataFrame) -> dict[str, dict]:
    """Per analysis: the count and `stats_ns` a report gives, computed by polars from the
    pairs (linear quantiles between the closest ranks, the population stddev)."""
    out = {}
    for (name,), group in pairs.group_by("analysis", maintain_order=True):
        ns = group["latency_ns"]
        out[name] = {
            "count": group.height,
            "min": ns.min(),
            "mean": ns.mean(),
            "stddev": ns.std(ddof=0),
            "p50": ns.quantile(0.5, "linear"),
            "p90": ns.quantile(0.9, "linear"),
            "p99": ns.quantile(0.99, "linear"),
            "p999": ns.quantile(0.999, "linear"),
            "max": ns.max(),
        }
    return out


def measured(report: dict) -> dict[str, dict]:
    """A report's analyses by name, a chain's stages (`chain/cmd->irq`) among them, as
    `pairs` names them; those that measured nothing have no pairs."""
    out = {}
    for a in report["analyses"]:
        for entry in [a, *a.get("stages", [])]:
            if entry["count"] > 0:
                out[entry["name"]] = entry
    return out


def assert_stats_equal(ours: dict, report: dict, analyses: list[str] | None = None):
    """Each analysis's figures equal the report's: counts, extremes and quantiles exactly;
    the mean and stddev to the last few bits (a report sums with compensation). With
    `analyses`, those are the ones measured."""
    theirs_all = measured(report)
    assert sorted(ours) == sorted(theirs_all), (sorted(ours), sorted(theirs_all))
    if analyses is not None:
        assert set(analyses) <= set(ours), (analyses, sorted(ours))
    for name, mine in ours.items():
        theirs = theirs_all[name]
        assert mine["count"] == theirs["count"] > 0, name
        for stat in ["min", "p50", "p90", "p99", "p999", "max"]:
            assert mine[stat] == theirs["stats_ns"][stat], (name, stat, mine[stat], theirs["stats_ns"][stat])
        for stat in ["mean", "stddev"]:
            assert math.isclose(mine[stat], theirs["stats_ns"][stat], rel_tol=1e-12), (name, stat)


def test_pairs_of_a_preset_give_the_reports_statistics():
    pairs = latscope.open(VIRTIO).pairs("block")
    assert set(pairs["analysis"]) == {"block"}
    assert pairs.columns[:3] == ["dataset_version", "capture", "analysis"]
    report = cli_json("report", VIRTIO, "--preset", "block", "--format", "json")
    assert_stats_equal(stats_of(pairs), report, ["block"])


def test_pairs_of_every_default_preset_give_the_reports_statistics(tmp_path):
    cap = latscope.open(VIRTIO)
    pairs = cap.pairs()
    report = cli_json("report", VIRTIO, "--format", "json")
    assert len(measured(report)) >= 5, sorted(measured(report))
    assert_stats_equal(stats_of(pairs), report)
    # And the rows are `latscope query`'s, the capture's content hash included.
    assert_frame_equal(pairs, cli_parquet(tmp_path, VIRTIO, "--sql", "SELECT * FROM pairs"))


def test_pairs_of_rules_and_presets_together():
    rule = "rq=block_rq_issue -> block_rq_complete by dev,sector"
    pairs = latscope.open(VIRTIO).pairs(["irq-handler", rule])
    report = cli_json("report", VIRTIO, "--preset", "irq-handler", "--rule", rule, "--format", "json")
    assert_stats_equal(stats_of(pairs), report, ["irq-handler", "rq"])


def test_pairs_on_another_trace_with_the_wakeup_preset():
    trace = "samples/ftrace/timer_wakeups_under_load.dat"
    pairs = latscope.open(trace).pairs("wakeup")
    report = cli_json("report", trace, "--preset", "wakeup", "--format", "json")
    assert_stats_equal(stats_of(pairs), report, ["wakeup"])


SD = "samples/corpus/sigrok/sd_rcarh2_cmd23_cmd18.sr"
SD_SPEC = "sd:clk=CLK,cmd=CMD"


def as_stored(fields: dict) -> dict:
    """A decoder's fields as the model stores them: a bool as the integer 0 or 1 (the
    `annotations` table reads them back from the decoded events)."""
    return {k: int(v) if isinstance(v, bool) else v for k, v in fields.items()}


def decode_rows(annotations: list[dict]) -> list[tuple]:
    """`latscope decode --format json`'s annotations as comparable rows, in time order."""
    rows = [
        (
            a["decoder"],
            a["row"],
            a["start_s"],
            a["end_s"],
            a["start_sample"],
            a["end_sample"],
            a["text"],
            json.dumps(as_stored(a["fields"]), sort_keys=True),
        )
        for a in annotations
    ]
    return sorted(rows, key=lambda r: (r[2], r[3], r[0], r[1], r[6]))


def frame_rows(df: pl.DataFrame) -> list[tuple]:
    rows = [
        (
            r["decoder"],
            r["row"],
            r["start_s"],
            r["end_s"],
            r["start_sample"],
            r["end_sample"],
            r["text"],
            json.dumps(json.loads(r["fields"]) if r["fields"] is not None else {}, sort_keys=True),
        )
        for r in df.iter_rows(named=True)
    ]
    return sorted(rows, key=lambda r: (r[2], r[3], r[0], r[1], r[6]))


@pytest.mark.parametrize(
    "capture,spec",
    [
        (SD, SD_SPEC),
        ("samples/corpus/sigrok/sd_cardreader_cmd55_acmd41.sr", "sd:clk=CLK,cmd=CMD"),
        ("samples/corpus/sigrok/i2c_dds120_scl_analog.sr", "i2c:scl=SCL analog,sda=SDA"),
    ],
    ids=["sd-rcarh2", "sd-cardreader", "i2c-dds120"],
)
def test_decode_gives_latscope_decodes_annotations(capture, spec):
    cap = latscope.open(capture)
    ours = cap.decode(spec)
    theirs = cli_json("decode", capture, "--decoder", spec, "--format", "json")
    assert len(theirs["annotations"]) >= 4
    assert ours.height == len(theirs["annotations"])
    assert frame_rows(ours) == decode_rows(theirs["annotations"])
    assert set(ours["source"]) == {capture}


def test_decoded_events_join_the_tables_as_with_decoder(tmp_path):
    cap = latscope.open(SD)
    cap.decode(SD_SPEC)
    assert "sd_cmd" in cap.tables()
    for name in ["sd_cmd", "annotations", "events"]:
        ours = cap.table(name)
        theirs = cli_parquet(tmp_path, SD, "--decoder", SD_SPEC, "--sql", f"SELECT * FROM {name}")
        assert_frame_equal(ours, theirs)
    # Both of its command-response pairs end at a CRC error: left out unless asked for.
    assert cap.pairs("sd-cmd-resp").height == 0
    pairs = cap.pairs("sd-cmd-resp", include_errors=True)
    args = ["report", SD, "--decoder", SD_SPEC, "--preset", "sd-cmd-resp", "--format", "json"]
    assert_stats_equal(stats_of(pairs), cli_json(*args, "--include-errors"), ["sd-cmd-resp"])
    assert measured(cli_json(*args)) == {}


SCENARIO = "imx8mq-cpuidle"
SETTING = "socs.imx8mq.deep_exit_us"


def sim_report(*sets: str) -> dict:
    args = ["sim", SCENARIO, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    return cli_json(*args)


def test_sim_pairs_give_latscope_sims_statistics():
    cap = latscope.sim(SCENARIO)
    assert cap.analyses, "a scenario measures something"
    report = sim_report()
    assert_stats_equal(stats_of(cap.pairs()), report)


def test_a_dotted_setting_changes_the_run_as_sim_set_does():
    default = latscope.sim(SCENARIO)
    fast = latscope.sim(SCENARIO, settings={SETTING: 80})
    report = sim_report(f"{SETTING}=80")
    assert_stats_equal(stats_of(fast.pairs()), report)
    # The exit latency the setting names is what changed: the idle exits shrink to ~80 µs.
    before, after = stats_of(default.pairs()), stats_of(fast.pairs())
    changed = [a for a in after if before[a]["p50"] != after[a]["p50"]]
    assert changed, "the setting changed no analysis"
    assert report != sim_report()
    # Settings of every type: a bool-like word, a float, a list.
    more = {"pm_qos": "on", "idle_probability": 0.25, "socs.imx8mq.transfer_us": [400.0, 440.0]}
    sets = ["pm_qos=on", "idle_probability=0.25", "socs.imx8mq.transfer_us=[400.0, 440.0]"]
    assert_stats_equal(stats_of(latscope.sim(SCENARIO, settings=more).pairs()), sim_report(*sets))


def test_a_simulated_runs_events_are_the_simulated_trace(tmp_path):
    cap = latscope.sim(SCENARIO, seed=7, duration="20ms")
    events = cap.events()
    assert events.height > 100
    assert_frame_equal(events, latscope.sim(SCENARIO, seed=7, duration="20ms").events())
    assert not latscope.sim(SCENARIO, seed=8, duration="20ms").events().equals(events)
    # Written as ftrace text and read back, the trace has the same events (to the text's
    # microsecond).
    trace = tmp_path / "sim.txt"
    cli("sim", SCENARIO, "--seed", "7", "--duration", "20ms", "--trace-out", trace, "--format", "json")
    back = latscope.open(str(trace)).events()
    assert back["name"].to_list() == events["name"].to_list()
    assert back["cpu"].to_list() == events["cpu"].to_list()
    assert (back["time_s"] - events["time_s"]).abs().max() < 1e-6
