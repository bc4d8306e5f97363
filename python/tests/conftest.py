"""What the Python API's tests share: the repository, the `latscope` binary they compare
with (the oracle: the command line over the same engine), and the corpora.

The binary is `$LATSCOPE_BIN`, else `$CARGO_TARGET_DIR/debug/latscope`, else
`target/debug/latscope` (`cargo build -p latscope` builds it). A test whose input is missing
fails naming it; the shared corpus (`../shared/corpus` or `$LATSCOPE_CORPUS`) is optional
outside CI, as for the Rust tests (docs/ARCHITECTURE.md, "Tests").
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import polars as pl
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def latscope_bin() -> pathlib.Path:
    if os.environ.get("LATSCOPE_BIN"):
        return pathlib.Path(os.environ["LATSCOPE_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    return target / "debug" / "latscope"


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the `latscope` binary; with `check`, fails on a non-zero exit, showing stderr."""
    binary = latscope_bin()
    if not binary.exists():
        pytest.fail(f"needs the latscope binary {binary}: cargo build -p latscope, or set LATSCOPE_BIN")
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if check and done.returncode != 0:
        pytest.fail(f"latscope {' '.join(map(str, args))} exited {done.returncode}: {done.stderr}")
    return done


def cli_error(*args: str) -> str:
    """The error `latscope` prints (exit 1), without its `latscope: ` prefix."""
    done = cli(*args, check=False)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "", done.stdout
    return done.stderr.strip().removeprefix("latscope: ")


def cli_parquet(tmp_path: pathlib.Path, *args: str) -> pl.DataFrame:
    """`latscope query ARGS -o OUT.parquet`, read back."""
    out = tmp_path / f"q{len(list(tmp_path.iterdir()))}.parquet"
    cli("query", *args, "-o", out)
    return pl.read_parquet(out)


def cli_json(*args: str):
    return json.loads(cli(*args).stdout)


def shared_corpus() -> pathlib.Path | None:
    root = pathlib.Path(os.environ.get("LATSCOPE_CORPUS", ROOT.parent / "shared" / "corpus"))
    return root if (root / "MANIFEST.tsv").exists() else None


def needs_shared_corpus():
    """Skipped (with what it needs) outside CI; in CI (`CI` set) a missing corpus fails."""
    return pytest.mark.skipif(
        shared_corpus() is None and not os.environ.get("CI"),
        reason="needs the shared corpus: ../shared/corpus or $LATSCOPE_CORPUS",
    )


def need(path: pathlib.Path) -> pathlib.Path:
    if not path.exists():
        pytest.fail(f"needs {path}")
    return path
