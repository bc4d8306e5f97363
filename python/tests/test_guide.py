"""docs/guide/python.md: its cells are `docs/guide/scripts/python_imx8mq.py`, the output it shows
is what the script prints (every number, whatever table borders the installed polars
draws), and the figures its answer states follow from them."""

from __future__ import annotations

import re
import subprocess
import sys

import latscope
import pytest

from conftest import ROOT, cli_json

GUIDE = ROOT / "docs/guide"
SCRIPT = GUIDE / "scripts/python_imx8mq.py"
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def page() -> str:
    return (GUIDE / "python.md").read_text()


def blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of `text` opened with ```LANG (```` ``` ```` alone: `lang` "")."""
    out, current, open_lang = [], [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if open_lang is None:
                open_lang, current = line[3:].strip(), []
            else:
                if open_lang == lang:
                    out.append("".join(current))
                open_lang = None
        elif open_lang is not None:
            current.append(line)
    return out


def cells() -> list[str]:
    """The script's cells, without their `# %%` markers and the script's heading."""
    parts = SCRIPT.read_text().split("# %%\n")[1:]
    return [p.strip() + "\n" for p in parts]


def numbers(text: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(text)]


@pytest.fixture(scope="module")
def printed() -> str:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_page_shows_the_scripts_cells():
    shown = blocks(page(), "python")
    assert len(cells()) == 2
    for cell in cells():
        assert cell in shown, f"not on the page as it is in the script:\n{cell}"


def test_the_pages_output_is_what_the_script_prints(printed):
    outputs = [b for b in blocks(page(), "") if b.startswith("shape:")]
    assert len(outputs) == 2
    shown = numbers("".join(outputs))
    assert len(shown) > 20
    assert shown == numbers(printed)


def test_the_answer_follows_from_the_output(printed):
    rows = {}
    for line in printed.splitlines():
        cols = [c.strip() for c in line.strip("│ ").split("┆")]
        if len(cols) == 4 and cols[0].startswith("6."):
            rows[cols[0]] = [float(c) for c in cols[1:]]
    mib = {run: r[2] for run, r in rows.items()}
    drop = 1 - mib["6.6: idle 80 %"] / mib["6.1: idle 25 %"]
    assert round(drop * 100, 1) == 29.6
    text = page()
    assert "29.6 %" in text and "97.0 → 68.3" in text and "120.5 MiB/s" in text
    assert f"{mib['6.1: idle 25 %']:.1f}" == "97.0" and f"{mib['6.6 + PM QoS']:.1f}" == "120.5"
    # A faster exit beats 6.1 even at 80 % idle; PM QoS leaves the WFI exit only.
    assert mib["6.6, exit 80 us"] > mib["6.1: idle 25 %"]
    assert rows["6.6, exit 80 us"][1] == 80.0 and rows["6.6 + PM QoS"][1] == 1.0


def test_the_real_trace_lines_run_and_give_the_reports_p99(monkeypatch):
    monkeypatch.chdir(ROOT)
    code = blocks(page(), "python")[-1]
    lines = code.splitlines()
    scope: dict = {"latscope": latscope}
    exec("\n".join(lines[:-1]), scope)
    p99 = eval(lines[-1].split("#")[0], scope)
    assert scope["issues"].height == 400 and scope["slow"].height == 5
    report = cli_json("report", "samples/ftrace/virtio_blk_direct_read.dat", "--preset", "block", "--format", "json")
    assert p99 == report["analyses"][0]["stats_ns"]["p99"]
    assert f"{p99:.2f}" in lines[-1]
