#!/usr/bin/env bash
# Lists the dependencies whose features differ between the workspace's build (`cargo build
# --workspace --all-targets`, as CI runs it) and maturin's build of this crate alone. Each one
# is compiled a second time for the wheel (polars among them: 12 minutes); python/Cargo.toml
# turns the missing features on. Prints nothing and exits 0 when they agree.
set -euo pipefail
cd "$(dirname "$0")/.."
ws=$(mktemp) py=$(mktemp)
trap 'rm -f "$ws" "$py"' EXIT
cargo tree --workspace -e normal,build,dev -f '{p} {f}' --prefix none | sort -u >"$ws"
cargo tree -p latscope-python --features python -e normal,build -f '{p} {f}' --prefix none | sort -u >"$py"
python3 - "$ws" "$py" <<'PY'
import sys

def features(path):
    """Per package, each set of features it is built with (a build dependency is resolved
    apart from the same crate as a normal dependency)."""
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) < 2:
            continue
        rest = [p for p in parts[2:] if not (p.startswith("(") or p.endswith(")"))]
        feats = frozenset(rest[-1].split(",")) if rest else frozenset()
        out.setdefault(f"{parts[0]} {parts[1]}", set()).add(feats)
    return out

ws, py = features(sys.argv[1]), features(sys.argv[2])
differ = [
    f"{name}: built with {sorted(f)}, the workspace builds {[sorted(w) for w in ws[name]]}"
    for name in sorted(py)
    if name in ws and name != "latscope-python v0.1.0"
    for f in py[name]
    if f not in ws[name]
]
print("\n".join(differ))
sys.exit(1 if differ else 0)
PY
