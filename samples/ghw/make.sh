#!/bin/sh
# Regenerates the GHW files (and the VCD of the same runs, for cross-checks) from the
# testbenches in this directory with GHDL 2.0.0 (Debian package `ghdl`, mcode backend).
# GHDL's library files go to a temporary work directory, not here.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tb in counter fsm nested; do
    ghdl -a --std=08 --workdir="$work" "${tb}_tb.vhd"
    ghdl -e --std=08 --workdir="$work" "${tb}_tb"
    ghdl -r --std=08 --workdir="$work" "${tb}_tb" --wave="$tb.ghw"
    ghdl -r --std=08 --workdir="$work" "${tb}_tb" --vcd="$tb.vcd"
done
