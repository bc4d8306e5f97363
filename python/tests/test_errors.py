"""Bad input raises `latscope.Error` with the engine's message — the same text `latscope` prints
— naming the file and where in it, or the table and column; wrong Python types raise
TypeError. Nothing crashes the interpreter."""

from __future__ import annotations

import latscope
import pytest

from conftest import ROOT, SAMPLES, cli_error

VIRTIO = "samples/ftrace/virtio_blk_direct_read.dat"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def raised(call) -> str:
    with pytest.raises(latscope.Error) as e:
        call()
    return str(e.value)


def test_a_missing_file_names_it():
    message = raised(lambda: latscope.open("no/such/trace.dat"))
    assert "no/such/trace.dat" in message
    # The command line adds the OS error's own text after it.
    assert cli_error("query", "no/such/trace.dat", "--sql", "SELECT * FROM events").startswith(message)


def test_a_damaged_trace_names_the_file_and_the_byte(tmp_path):
    whole = (SAMPLES / "ftrace/virtio_blk_direct_read.dat").read_bytes()
    cut = tmp_path / "cut.dat"
    cut.write_bytes(whole[:300])
    message = raised(lambda: latscope.open(str(cut)))
    assert str(cut) in message and "byte" in message, message
    assert message == cli_error("query", str(cut), "--sql", "SELECT * FROM events")


def test_a_malformed_text_trace_names_the_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# tracer: nop\n#\n" + "\x00\x01garbage\n" * 3)
    message = raised(lambda: latscope.open(str(bad)))
    assert str(bad) in message and "line" in message, message
    assert message == cli_error("query", str(bad), "--sql", "SELECT * FROM events")


@pytest.mark.parametrize(
    "sql,words",
    [
        ("SELEC name FROM events", ["SQL"]),
        ("SELECT * FROM nosuch", ['unknown table "nosuch"', "block_rq_issue"]),
        ("SELECT sectr FROM block_rq_issue", ['unknown column "sectr"', "sector"]),
    ],
)
def test_bad_sql_an_unknown_table_or_column_say_so(sql, words):
    cap = latscope.open(VIRTIO)
    message = raised(lambda: cap.query(sql))
    for w in words:
        assert w in message, message
    assert message == cli_error("query", VIRTIO, "--sql", sql)
    # The capture is still usable.
    assert cap.events().height > 0


def test_an_unknown_table_name():
    message = raised(lambda: latscope.open(VIRTIO).table("nosuch"))
    assert 'unknown table "nosuch"' in message


def test_an_unknown_preset_and_a_bad_rule():
    cap = latscope.open(VIRTIO)
    message = raised(lambda: cap.pairs("nosuch"))
    assert "nosuch" in message and "block" in message, message
    assert cli_error("report", VIRTIO, "--preset", "nosuch").endswith(message)
    message = raised(lambda: cap.pairs("a -> "))
    assert 'rule "a ->": column 4' in message, message
    assert cli_error("report", VIRTIO, "--rule", "a -> ").endswith(message)


def test_a_preset_without_its_events_says_what_to_record():
    message = raised(lambda: latscope.open("samples/corpus/sigrok/sd_rcarh2_cmd23_cmd18.sr").pairs("block"))
    assert "block" in message and "trace-cmd record" in message, message


def test_a_bad_decoder_spec_and_missing_channels():
    cap = latscope.open("samples/corpus/sigrok/sd_rcarh2_cmd23_cmd18.sr")
    message = raised(lambda: cap.decode("nosuch:clk=CLK"))
    assert "nosuch" in message, message
    message = raised(lambda: cap.decode("i2c:scl=SCL,sda=SDA"))
    assert "SCL" in message or "channel" in message, message
    # Still decodes afterwards.
    assert cap.decode("sd:clk=CLK,cmd=CMD").height > 0


def test_an_unknown_scenario_and_setting():
    message = raised(lambda: latscope.sim("nosuch"))
    assert "nosuch" in message
    assert message == cli_error("sim", "nosuch")
    message = raised(lambda: latscope.sim("imx8mq-cpuidle", settings={"socs.imx8mq.nope": 1}))
    assert "socs.imx8mq.nope" in message and "socs.imx8mq.deep_exit_us" in message, message
    assert message == cli_error("sim", "imx8mq-cpuidle", "--set", "socs.imx8mq.nope=1")
    message = raised(lambda: latscope.sim("imx8mq-cpuidle", settings={"socs.imx8mq.deep_exit_us": "slow"}))
    assert "deep_exit_us" in message, message


def test_no_path_at_all():
    assert "at least one capture file" in raised(lambda: latscope.open([]))


def test_wrong_python_types_raise_type_error():
    with pytest.raises(TypeError):
        latscope.open(42)
    with pytest.raises(TypeError):
        latscope.sim("imx8mq-cpuidle", settings={"socs.imx8mq.deep_exit_us": object()})
    with pytest.raises(TypeError):
        latscope.open(VIRTIO).pairs(42)
