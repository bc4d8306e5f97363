#!/bin/bash
# Times latscope's trace.dat import against `trace-cmd report FILE > /dev/null` on the same
# files and prints the ratios (wall and CPU time, best of N runs each).
#   bench/tracedat-vs-trace-cmd.sh FILE.dat...        (RUNS=5 by default)
set -euo pipefail
RUNS=${RUNS:-5}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build -q --release -p latscope-importers --example tracedat_info
bin=$CARGO_TARGET_DIR/release/examples/tracedat_info
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
best() { # best wall and cpu (user+sys) seconds of RUNS runs of "$@"
    local bw=999999 bc=999999 w c
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$tmp" -f '%e %U %S' "$@" >/dev/null 2>&1
        read -r w c < <(awk '{print $1, $2 + $3}' "$tmp")
        bw=$(awk -v a="$w" -v b="$bw" 'BEGIN {print (a < b) ? a : b}')
        bc=$(awk -v a="$c" -v b="$bc" 'BEGIN {print (a < b) ? a : b}')
    done
    echo "$bw $bc"
}
for f in "$@"; do
    read -r tw tc < <(best trace-cmd report "$f")
    read -r lw lc < <(best "$bin" "$f")
    awk -v f="$f" -v tw="$tw" -v tc="$tc" -v lw="$lw" -v lc="$lc" 'BEGIN {
        printf "%s\n  trace-cmd report: %.3f s wall, %.3f s cpu\n  latscope import:  %.3f s wall, %.3f s cpu\n  ratio: %.1fx wall, %.1fx cpu\n",
            f, tw, tc, lw, lc, tw / (lw > 0 ? lw : 0.001), tc / (lc > 0 ? lc : 0.001) }'
done
