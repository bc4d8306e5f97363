#!/bin/bash
# Time latscope against the peer tools on the same inputs, in the same run.
#   bench/peers.sh [BENCH_DIR] [REPS]        (defaults: target/bench-data/, 5)
# BENCH_DIR is made by bench/record-big-trace.sh (ftrace_big.txt, trace_big_v6.dat,
# trace_big_v7.dat). The sigrok inputs (demo_5M.sr, demo_5M.vcd) are generated into it
# on first use with sigrok-cli's demo driver.
# Environment: LATSCOPE (default target/release/latscope; built with
# `cargo build --release -p latscope` when missing and LATSCOPE is unset), REPS,
# ROWS (default "dat events text sr vcd decode real wave analog": which groups of rows to run),
# WELLEN_LOAD (default target/release/examples/wellen_load; built with `cargo build --release
# -p latscope-importers --example wellen_load` when missing and WELLEN_LOAD is unset).
#
# Rows (each command's stdout goes to /dev/null; every repetition runs all commands of a
# row, alternating their order; the table shows the median wall time, min..max, the
# median CPU time (user+sys), the peak RSS (max over repetitions, /usr/bin/time %M) and
# the ratio peer/latscope of the wall medians):
#   trace.dat v6 / v7     trace-cmd report F        vs latscope info F --json   goal >= 10x
#   events v6 / v7        trace-cmd report F        vs latscope events F  (the same text,
#                                                   line for line: tests/cli_events.rs)
#   ftrace text 40 MB     latscope info F --json -> MB/s                         goal >= 300 MB/s
#   sigrok .sr 5M         sigrok-cli -i F -P timing:data=D1 -A timing=time   (5M-sample
#                         demo capture, logic channels D0-D7 only, 200 kHz)
#                                                   vs latscope report F --rule pulse:D1
#   VCD                   sigrok-cli -i F.vcd -O null vs latscope info F.vcd --json
#   decode SPI 10M        sigrok-cli -i F -P spi:... -A spi=mosi-data:miso-data
#                                                   vs latscope decode F --decoder 'spi:...'
#                         (spi_10M.sr: 10M samples of continuous SPI, bench/make_spi_sr.py)
#                         goal >= 50x
#   decode UART 10M       sigrok-cli -i F -P uart:tx=TX:rx=RX:baudrate=1000000 -A uart=tx-data:rx-data
#                                                   vs latscope decode F --decoder 'uart:...'
#                         (uart_10M.sr: 10M samples, two lines of 1 Mbaud 8N1 back to back,
#                         bench/make_uart_sr.py) goal >= 50x
#   decode UART 10M idle  latscope decode F --decoder 'uart:...' on uart_idle_10M.sr (the same
#                         samples, no traffic): memory follows annotations, not samples
#   decode I2C 10M        sigrok-cli -i F -P i2c:scl=SCL:sda=SDA -A i2c=addr-data
#                                                   vs latscope decode F --decoder 'i2c:...'
#                         (i2c_10M.sr: 10M samples of back-to-back 3-byte write transactions,
#                         bench/make_i2c_sr.py) goal >= 50x
#   decode SD 10M         sigrok-cli -i F -P sdcard_sd:cmd=CMD:clk=CLK -A sdcard_sd=cmd
#                                                   vs latscope decode F --decoder 'sd:...'
#                         (sd_cmd_10M.sr: 10M samples of CMD13/CMD17 and their R1s on the
#                         CMD line, bench/make_sd_sr.py) goal >= 50x
#   (DECODERS="spi uart i2c sd" picks the decode rows; each sigrok-cli run takes minutes)
# Real-shaped rows (ROWS=real; inputs made by bench/make_sd_real_sr.py: sd_real.sr has the
# shape of sigrok-dumps' full i.MX6 SD session, 627 M samples at 40 MHz, 16 channels, 1,198
# chunks of 1 MiB of which 1,060 are the same idle bytes, ~16 M clock edges):
#   open SD session       python3 bench/isal_inflate.py F (ISA-L inflating every logic-*
#                         member in two processes: the inflate limit)
#                                                   vs latscope info F --json
#                         goal: latscope at most 1.5x the inflate (ratio >= 0.67)
#   decode SD CMD         sigrok-cli -i F -P sdcard_sd:cmd=CMD:clk=CLK -A sdcard_sd=cmd
#                                                   vs latscope decode F --decoder sd:clk=CLK,cmd=CMD --format json
#                         goal >= 12x
#   decode SD CMD+DAT     latscope decode F --decoder sd:...,dat0..dat3 --format json (sigrok's
#                         sdcard_sd reads no DAT lines)
#   workbench             latscope --screenshot P.png --decoder sd:clk=CLK,cmd=CMD F under
#                         xvfb-run (window, load, decode, draw, PNG): peak RSS goal < 300 MB;
#                         LATSCOPE_FRAME_LOG gives the time until the tracks are drawn
# Waveform rows (ROWS=wave; sd_real_q.vcd is sigrok-cli -O vcd of the quarter-scale capture,
# sd_real_q.fst the same through importers/tests/data/make_fst.py, which needs pylibfst):
#   VCD / FST             wellen_load F (wellen's loader alone: header, body, every signal)
#                                                   vs latscope info F --json
# Analog rows (ROWS=analog; bench/make_analog.py: one channel of 48 M samples):
#   analog .sr / CSV      latscope info F --json (goal < 5 s; Perfetto needs 246 s for 48
#                         counters of 1 M samples each)
# Nothing is installed: a missing peer tool skips its rows with a message. Before timing,
# latscope runs once per input; if it fails (or `info` reports no events) its failure is
# printed instead of timings.
set -euo pipefail

DIR=${1:-target/bench-data}
REPS=${2:-${REPS:-5}}
LS=${LATSCOPE:-target/release/latscope}
ROWS_SEL=" ${ROWS:-dat events text sr vcd decode real wave analog} "
want() { [[ $ROWS_SEL == *" $1 "* ]]; }
DECODERS_SEL=" ${DECODERS:-spi uart i2c sd} "
want_decoder() { want decode && [[ $DECODERS_SEL == *" $1 "* ]]; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "peers.sh: REPS must be a positive integer" >&2; exit 1; }
[ -d "$DIR" ] || { echo "peers.sh: no bench-data directory $DIR (run bench/record-big-trace.sh)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/latscope-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }
TIME=; [ -x /usr/bin/time ] && TIME=/usr/bin/time
[ -n "$TIME" ] || echo "note: /usr/bin/time not found, peak RSS is not measured"

# ---------------------------------------------------------------- latscope binary
LS_OK=1
if [ ! -x "$LS" ]; then
    if [ -z "${LATSCOPE:-}" ] && have cargo; then
        echo "latscope binary $LS is missing: building it with 'cargo build --release -p latscope'"
        if ! cargo build --release -p latscope >"$tmp/build.log" 2>&1; then
            tail -n 20 "$tmp/build.log" >&2
            echo "peers.sh: the latscope build failed; latscope rows are skipped" >&2
            LS_OK=0
        fi
    else
        echo "peers.sh: latscope binary $LS not found; latscope rows are skipped" >&2
        LS_OK=0
    fi
fi
[ "$LS_OK" = 0 ] || [ -x "$LS" ] || LS_OK=0

# ---------------------------------------------------------------- helpers
# Each case is a name; cmd_NAME fills the array CMD.
declare -A FAILED=()      # case -> message
declare -A SIZE_MB=()     # case -> input size in MB (for MB/s)

fsize_mb() { awk -v b="$(stat -L -c %s "$1")" 'BEGIN { printf "%.3f", b / 1e6 }'; }
first_err() { # first non-empty line of a file, or the exit status
    local l; l=$(grep -m1 . "$1" 2>/dev/null || true); echo "${l:-no message}"
}

# run_once CASE -> appends "seconds rss_kb" to $tmp/CASE.t; returns the command's status
run_once() {
    local c=$1 t0 t1 rc=0 rss=- cpu=-
    "cmd_$c"
    t0=$(date +%s.%N)
    if [ -n "$TIME" ]; then
        "$TIME" -f '%M %U %S' -o "$tmp/rss" "${CMD[@]}" >/dev/null 2>"$tmp/$c.err" || rc=$?
    else
        "${CMD[@]}" >/dev/null 2>"$tmp/$c.err" || rc=$?
    fi
    t1=$(date +%s.%N)
    if [ "$rc" != 0 ]; then return "$rc"; fi
    [ -z "$TIME" ] || read -r rss cpu < <(tail -n1 "$tmp/rss" | awk '{ print $1, $2 + $3 }')
    awk -v a="$t0" -v b="$t1" -v r="$rss" -v u="$cpu" 'BEGIN { printf "%.6f %s %s\n", b - a, r, u }' >>"$tmp/$c.t"
}

# time_row CASE... : REPS alternating repetitions of all the cases of one row
time_row() {
    local rep c order rc
    for ((rep = 1; rep <= REPS; rep++)); do
        if ((rep % 2)); then order=("$@"); else order=(); for c in "$@"; do order=("$c" "${order[@]}"); done; fi
        for c in "${order[@]}"; do
            [ -z "${FAILED[$c]:-}" ] || continue
            rc=0; run_once "$c" || rc=$?
            if [ "$rc" != 0 ]; then FAILED[$c]="exit $rc: $(first_err "$tmp/$c.err")"; fi
        done
    done
}

# stats CASE -> "median min max maxrss_kb median_cpu"
stats() {
    local cpu
    cpu=$(awk '$3 != "-" { print $3 }' "$tmp/$1.t" | sort -g | awk '
        { u[NR] = $1 } END { if (!NR) print "-"
            else printf "%.2f\n", (NR % 2) ? u[(NR + 1) / 2] : (u[NR / 2] + u[NR / 2 + 1]) / 2 }')
    sort -g -k1,1 "$tmp/$1.t" | awk -v cpu="$cpu" '
        { t[NR] = $1; if ($2 != "-" && $2 > m) m = $2 }
        END { med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
              printf "%.4f %.4f %.4f %s %s\n", med, t[1], t[NR], (m ? m : "-"), cpu }'
}

ROWS=() NOTES=()
add_row() { ROWS+=("$(printf '%s\t' "$@")"); }
# (FAILED cells refer to NOTES, printed under the table)

# report_case ROW_LABEL CASE [REF_CASE] : one table line (ratio = this median / REF median,
# i.e. how many times faster latscope is when REF is latscope)
report_case() {
    local label=$1 c=$2 ref=${3:-} med min max rss cpu ratio="" mbs=""
    if [ -n "${FAILED[$c]:-}" ]; then
        NOTES+=("${FAILED[$c]}")
        add_row "$label" "$(desc "$c")" "FAILED [${#NOTES[@]}]"; return
    fi
    if [ ! -s "$tmp/$c.t" ]; then add_row "$label" "$(desc "$c")" "skipped"; return; fi
    read -r med min max rss cpu < <(stats "$c")
    [ "$rss" = - ] || rss=$(awk -v k="$rss" 'BEGIN { printf "%.1f MB", k / 1024 }')
    if [ -n "$ref" ] && [ -z "${FAILED[$ref]:-}" ] && [ -s "$tmp/$ref.t" ]; then
        ratio=$(awk -v a="$(stats "$ref" | cut -d' ' -f1)" -v b="$med" 'BEGIN { printf "%.1fx", b / a }')
    fi
    [ -z "${SIZE_MB[$c]:-}" ] || mbs=$(awk -v s="${SIZE_MB[$c]}" -v t="$med" 'BEGIN { printf "%.0f MB/s", s / t }')
    add_row "$label" "$(desc "$c")" "$med s" "$min..$max" "$cpu s" "$rss" "$mbs" "$ratio"
}

# check_latscope CASE EXPECT_EVENTS: one validation run; on failure marks the case FAILED
check_latscope() {
    local c=$1 expect=${2:-} rc=0 ev
    "cmd_$c"
    "${CMD[@]}" >"$tmp/$c.out" 2>"$tmp/$c.err" || rc=$?
    if [ "$rc" != 0 ]; then
        FAILED[$c]="exit $rc: $(first_err "$tmp/$c.err")"
        echo "  latscope failed on ${CMD[*]}: ${FAILED[$c]}"
        return 1
    fi
    if [[ ${CMD[1]} == info ]]; then
        ev=$(grep -o '"events"[[:space:]]*:[[:space:]]*[0-9]*' "$tmp/$c.out" | head -n1 | grep -o '[0-9]*$' || true)
        if [ -z "$ev" ] || [ "$ev" = 0 ]; then
            FAILED[$c]="info reported no events"
            echo "  latscope ${CMD[*]}: no event count in its JSON output"
            return 1
        fi
        echo "  latscope ${CMD[*]}: $ev events${expect:+ (expected $expect)}"
    fi
}

desc() { "cmd_$1"; local s="${CMD[*]}"; echo "${s//$DIR\//}"; }
expected_events() { # from RECORDING.txt of record-big-trace.sh
    awk -v f="$1" '$1 == f { print $4 }' "$DIR/RECORDING.txt" 2>/dev/null || true
}

# ---------------------------------------------------------------- cases
V6=$DIR/trace_big_v6.dat V7=$DIR/trace_big_v7.dat TXT=$DIR/ftrace_big.txt
SR=$DIR/demo_5M.sr VCD=$DIR/demo_5M.vcd
cmd_tc_v6() { CMD=(trace-cmd report "$V6"); }
cmd_ls_v6() { CMD=("$LS" info "$V6" --json); }
cmd_tc_v7() { CMD=(trace-cmd report "$V7"); }
cmd_ls_v7() { CMD=("$LS" info "$V7" --json); }
cmd_lse_v6() { CMD=("$LS" events "$V6"); }
cmd_lse_v7() { CMD=("$LS" events "$V7"); }
cmd_ls_txt() { CMD=("$LS" info "$TXT" --json); }
cmd_sr_timing() { CMD=(sigrok-cli -i "$SR" -P timing:data=D1 -A timing=time); }
cmd_ls_pulse() { CMD=("$LS" report "$SR" --rule pulse:D1); }
cmd_sr_vcd() { CMD=(sigrok-cli -i "$VCD" -O null); }
SPI10M=$DIR/spi_10M.sr
cmd_sr_spi() { CMD=(sigrok-cli -i "$SPI10M" -P spi:clk=CLK:mosi=MOSI:miso=MISO:cs=CS -A spi=mosi-data:miso-data); }
cmd_ls_spi() { CMD=("$LS" decode "$SPI10M" --decoder spi:clk=CLK,mosi=MOSI,miso=MISO,cs=CS); }
UART10M=$DIR/uart_10M.sr UARTIDLE=$DIR/uart_idle_10M.sr
cmd_sr_uart() { CMD=(sigrok-cli -i "$UART10M" -P uart:tx=TX:rx=RX:baudrate=1000000 -A uart=tx-data:rx-data); }
cmd_ls_uart() { CMD=("$LS" decode "$UART10M" --decoder uart:tx=TX,rx=RX,baud=1000000); }
cmd_ls_uart_idle() { CMD=("$LS" decode "$UARTIDLE" --decoder uart:tx=TX,rx=RX,baud=1000000); }
I2C10M=$DIR/i2c_10M.sr SD10M=$DIR/sd_cmd_10M.sr
cmd_sr_i2c() { CMD=(sigrok-cli -i "$I2C10M" -P i2c:scl=SCL:sda=SDA -A i2c=addr-data); }
cmd_ls_i2c() { CMD=("$LS" decode "$I2C10M" --decoder i2c:scl=SCL,sda=SDA); }
cmd_sr_sd() { CMD=(sigrok-cli -i "$SD10M" -P sdcard_sd:cmd=CMD:clk=CLK -A sdcard_sd=cmd); }
cmd_ls_sd() { CMD=("$LS" decode "$SD10M" --decoder sd:clk=CLK,cmd=CMD); }
cmd_ls_vcd() { CMD=("$LS" info "$VCD" --json); }
BENCH=$(dirname "$0")
REAL=$DIR/sd_real.sr REALQ=$DIR/sd_real_q.sr REALVCD=$DIR/sd_real_q.vcd REALFST=$DIR/sd_real_q.fst
SD4="sd:clk=CLK,cmd=CMD,dat0=DAT0,dat1=DAT1,dat2=DAT2,dat3=DAT3"
WL=${WELLEN_LOAD:-target/release/examples/wellen_load}
ANSR=$DIR/analog_48M.sr ANCSV=$DIR/analog_48M.csv
cmd_isal_real() { CMD=(python3 "$BENCH/isal_inflate.py" "$REAL"); }
cmd_ls_real() { CMD=("$LS" info "$REAL" --json); }
cmd_sr_realsd() { CMD=(sigrok-cli -i "$REAL" -P sdcard_sd:cmd=CMD:clk=CLK -A sdcard_sd=cmd); }
cmd_ls_realsd() { CMD=("$LS" decode "$REAL" --decoder sd:clk=CLK,cmd=CMD --format json); }
cmd_ls_realsd4() { CMD=("$LS" decode "$REAL" --decoder "$SD4" --format json); }
cmd_ls_gui() { CMD=(env "LATSCOPE_FRAME_LOG=$tmp/frames.txt" xvfb-run -a -s "-screen 0 1600x1000x24" "$LS" --screenshot "$tmp/shot.png" --decoder sd:clk=CLK,cmd=CMD "$REAL"); }
cmd_wl_vcd() { CMD=("$WL" "$REALVCD"); }
cmd_ls_rvcd() { CMD=("$LS" info "$REALVCD" --json); }
cmd_wl_fst() { CMD=("$WL" "$REALFST"); }
cmd_ls_rfst() { CMD=("$LS" info "$REALFST" --json); }
cmd_ls_ansr() { CMD=("$LS" info "$ANSR" --json); }
cmd_ls_ancsv() { CMD=("$LS" info "$ANCSV" --json); }

echo "peers.sh: $REPS repetitions, inputs in $DIR, latscope = $LS"

# trace.dat v6 / v7
for v in v6 v7; do
    want dat || continue
    f=$DIR/trace_big_$v.dat
    label="trace.dat $v ($(fsize_mb "$f" 2>/dev/null || echo '?') MB)"
    if [ ! -f "$f" ]; then add_row "$label" "-" "skipped: $f missing (run bench/record-big-trace.sh)"; continue; fi
    cases=()
    if have trace-cmd; then cases+=("tc_$v"); else add_row "$label" "trace-cmd report" "skipped: trace-cmd is not installed"; fi
    if [ "$LS_OK" = 1 ] && check_latscope "ls_$v" "$(expected_events "trace_big_$v.dat")"; then cases+=("ls_$v"); fi
    echo "timing $label: ${cases[*]:-nothing}"
    [ ${#cases[@]} = 0 ] || time_row "${cases[@]}"
    if [ "$LS_OK" = 1 ]; then report_case "$label" "ls_$v"; else add_row "$label" "latscope info" "skipped: no latscope binary"; fi
    ! have trace-cmd || report_case "$label" "tc_$v" "ls_$v"
done

# trace.dat printed in full: latscope events against trace-cmd report
for v in v6 v7; do
    want events || continue
    f=$DIR/trace_big_$v.dat
    label="events $v ($(fsize_mb "$f" 2>/dev/null || echo '?') MB)"
    if [ ! -f "$f" ]; then add_row "$label" "-" "skipped: $f missing (run bench/record-big-trace.sh)"; continue; fi
    cases=()
    if have trace-cmd; then cases+=("tc_$v"); else add_row "$label" "trace-cmd report" "skipped: trace-cmd is not installed"; fi
    if [ "$LS_OK" = 1 ] && check_latscope "lse_$v"; then cases+=("lse_$v"); fi
    echo "timing $label: ${cases[*]:-nothing}"
    [ ${#cases[@]} = 0 ] || time_row "${cases[@]}"
    if [ "$LS_OK" = 1 ]; then report_case "$label" "lse_$v"; else add_row "$label" "latscope events" "skipped: no latscope binary"; fi
    ! have trace-cmd || report_case "$label" "tc_$v" "lse_$v"
done

# ftrace text
label="ftrace text"
if ! want text; then
    :
elif [ ! -f "$TXT" ]; then
    add_row "$label" "-" "skipped: $TXT missing (run bench/record-big-trace.sh)"
elif [ "$LS_OK" = 1 ]; then
    label="ftrace text ($(fsize_mb "$TXT") MB)"
    SIZE_MB[ls_txt]=$(fsize_mb "$TXT")
    if check_latscope ls_txt "$(expected_events ftrace_big.txt)"; then
        echo "timing $label"; time_row ls_txt
    fi
    report_case "$label" ls_txt
else
    add_row "$label" "latscope info" "skipped: no latscope binary"
fi

# sigrok: .sr pulse widths and VCD import
if ! want sr && ! want vcd; then
    :
elif ! have sigrok-cli; then
    add_row "sigrok .sr / VCD" "-" "skipped: sigrok-cli is not installed"
else
    if [ ! -f "$SR" ]; then
        # Logic channels only: the demo's 5 analog channels make generation take many
        # minutes (they are generated slowly) and are not used by either command.
        # At the demo's default 200 kHz this takes ~30 s (the demo paces itself).
        echo "generating $SR (sigrok-cli -d demo --channels D0..D7 --samples 5000000)"
        if sigrok-cli -d demo --channels D0,D1,D2,D3,D4,D5,D6,D7 --samples 5000000 \
                -o "$SR.part"; then mv "$SR.part" "$SR"
        else echo "peers.sh: sigrok demo capture failed" >&2; rm -f "$SR.part"; fi
    fi
    if [ -f "$SR" ] && [ ! -f "$VCD" ]; then
        echo "converting to $VCD (sigrok-cli -O vcd)"
        if sigrok-cli -i "$SR" -O vcd -o "$VCD.part"; then mv "$VCD.part" "$VCD"
        else echo "peers.sh: VCD conversion failed" >&2; rm -f "$VCD.part"; fi
    fi
    for row in sr vcd; do
        want $row || continue
        if [ ! -f "$SR" ] || [ ! -f "$VCD" ]; then
            add_row "sigrok $row" "-" "skipped: generating the sigrok inputs failed"; continue
        fi
        if [ $row = sr ]; then peer=sr_timing ours=ls_pulse label="sigrok .sr 5M samples ($(fsize_mb "$SR") MB)"
        else peer=sr_vcd ours=ls_vcd label="VCD ($(fsize_mb "$VCD") MB)"; fi
        cases=("$peer")
        if [ "$LS_OK" = 1 ]; then
            if check_latscope "$ours"; then cases+=("$ours")
            else FAILED[$ours]="skipped, latscope cannot do this yet (${FAILED[$ours]})"; fi
        fi
        echo "timing $label: ${cases[*]}"
        time_row "${cases[@]}"
        if [ "$LS_OK" = 1 ]; then report_case "$label" "$ours"; else add_row "$label" "latscope" "skipped: no latscope binary"; fi
        report_case "$label" "$peer" "$ours"
    done
fi

# protocol decoders over 10M samples
if want_decoder spi; then
    label="decode SPI 10M samples"
    if ! have sigrok-cli; then
        add_row "$label" "-" "skipped: sigrok-cli is not installed"
    else
        if [ ! -f "$SPI10M" ]; then
            echo "generating $SPI10M (bench/make_spi_sr.py)"
            python3 "$(dirname "$0")/make_spi_sr.py" "$SPI10M.part" 10000000 && mv "$SPI10M.part" "$SPI10M"
        fi
        cases=(sr_spi)
        [ "$LS_OK" = 1 ] && cases+=(ls_spi)
        echo "timing $label: ${cases[*]}"
        time_row "${cases[@]}"
        if [ "$LS_OK" = 1 ]; then report_case "$label" ls_spi; else add_row "$label" "latscope" "skipped: no latscope binary"; fi
        report_case "$label" sr_spi ls_spi
    fi
fi
if want_decoder uart; then
    label="decode UART 10M samples"
    if ! have sigrok-cli; then
        add_row "$label" "-" "skipped: sigrok-cli is not installed"
    else
        for f in "$UART10M" "$UARTIDLE"; do
            [ -f "$f" ] && continue
            echo "generating $f (bench/make_uart_sr.py)"
            idle=(); [ "$f" = "$UARTIDLE" ] && idle=(--idle)
            python3 "$(dirname "$0")/make_uart_sr.py" "$f.part" 10000000 "${idle[@]}" && mv "$f.part" "$f"
        done
        cases=(sr_uart)
        [ "$LS_OK" = 1 ] && cases+=(ls_uart ls_uart_idle)
        echo "timing $label: ${cases[*]}"
        time_row "${cases[@]}"
        if [ "$LS_OK" = 1 ]; then
            report_case "$label" ls_uart
            report_case "$label (no traffic)" ls_uart_idle
        else
            add_row "$label" "latscope" "skipped: no latscope binary"
        fi
        report_case "$label" sr_uart ls_uart
    fi
fi
# decode_row NAME LABEL FILE GENERATOR: one decoder, sigrok-cli against latscope
decode_row() {
    local name=$1 label=$2 f=$3 gen=$4
    if ! have sigrok-cli; then add_row "$label" "-" "skipped: sigrok-cli is not installed"; return; fi
    if [ ! -f "$f" ]; then
        echo "generating $f (bench/$gen)"
        python3 "$(dirname "$0")/$gen" "$f.part" 10000000 && mv "$f.part" "$f"
    fi
    cases=("sr_$name")
    if [ "$LS_OK" = 1 ] && check_latscope "ls_$name"; then cases+=("ls_$name"); fi
    echo "timing $label: ${cases[*]}"
    time_row "${cases[@]}"
    if [ "$LS_OK" = 1 ]; then report_case "$label" "ls_$name"; else add_row "$label" "latscope" "skipped: no latscope binary"; fi
    report_case "$label" "sr_$name" "ls_$name"
}
! want_decoder i2c || decode_row i2c "decode I2C 10M samples" "$I2C10M" make_i2c_sr.py
! want_decoder sd || decode_row sd "decode SD CMD 10M samples" "$SD10M" make_sd_sr.py

# real-shaped captures
if want real; then
    for f in "$REAL" "$REALQ"; do
        [ -f "$f" ] && continue
        scale=1; [ "$f" = "$REALQ" ] && scale=4
        echo "generating $f (bench/make_sd_real_sr.py --scale $scale)"
        python3 "$BENCH/make_sd_real_sr.py" "$f.part" --scale $scale && mv "$f.part" "$f"
    done
    label="open SD session shape ($(fsize_mb "$REAL") MB)"
    cases=()
    if python3 -c 'import isal' 2>/dev/null; then cases+=(isal_real); else add_row "$label" "isal" "skipped: PyPI isal is not installed (pip install isal)"; fi
    if [ "$LS_OK" = 1 ] && check_latscope ls_real; then cases+=(ls_real); fi
    echo "timing $label: ${cases[*]:-nothing}"
    [ ${#cases[@]} = 0 ] || time_row "${cases[@]}"
    report_case "$label" ls_real
    report_case "$label" isal_real ls_real
    label="decode SD CMD, session shape"
    cases=()
    if have sigrok-cli; then cases+=(sr_realsd); else add_row "$label" "-" "skipped: sigrok-cli is not installed"; fi
    if [ "$LS_OK" = 1 ] && check_latscope ls_realsd && check_latscope ls_realsd4; then cases+=(ls_realsd ls_realsd4); fi
    echo "timing $label: ${cases[*]:-nothing}"
    [ ${#cases[@]} = 0 ] || time_row "${cases[@]}"
    report_case "$label" ls_realsd
    report_case "decode SD CMD+DAT (4-bit), session shape" ls_realsd4
    report_case "$label" sr_realsd ls_realsd
    label="workbench + SD decode, session shape"
    if [ "$LS_OK" = 1 ] && have xvfb-run; then
        echo "timing $label"
        time_row ls_gui
        report_case "$label" ls_gui
        if [ -s "$tmp/frames.txt" ]; then NOTES+=("workbench frame log (last run): $(grep -E "^(preview_drawn|tracks_drawn|settled)_ms" "$tmp/frames.txt" | tr "\n" " " || echo 'no tracks-drawn line')"); fi
    else
        add_row "$label" "-" "skipped: needs xvfb-run and the latscope binary"
    fi
fi

# VCD and FST against wellen's own loader
if want wave; then
    WL_OK=1
    if [ ! -x "$WL" ]; then
        if [ -z "${WELLEN_LOAD:-}" ] && have cargo; then
            echo "building $WL (cargo build --release -p latscope-importers --example wellen_load)"
            cargo build --release -p latscope-importers --example wellen_load >"$tmp/wl.log" 2>&1 || { tail -n 5 "$tmp/wl.log" >&2; WL_OK=0; }
        else
            WL_OK=0
        fi
    fi
    if [ ! -f "$REALQ" ]; then
        python3 "$BENCH/make_sd_real_sr.py" "$REALQ.part" --scale 4 && mv "$REALQ.part" "$REALQ"
    fi
    if [ ! -f "$REALVCD" ] && have sigrok-cli; then
        echo "converting $REALQ to $REALVCD (sigrok-cli -O vcd)"
        sigrok-cli -i "$REALQ" -O vcd -o "$REALVCD.part" && mv "$REALVCD.part" "$REALVCD"
    fi
    if [ -f "$REALVCD" ] && [ ! -f "$REALFST" ]; then
        echo "converting $REALVCD to $REALFST (importers/tests/data/make_fst.py, pylibfst)"
        python3 "$BENCH/../importers/tests/data/make_fst.py" "$REALVCD" "$REALFST.part" && mv "$REALFST.part" "$REALFST" || rm -f "$REALFST.part"
    fi
    for kind in vcd fst; do
        f=$REALVCD peer=wl_vcd ours=ls_rvcd
        [ $kind = fst ] && f=$REALFST peer=wl_fst ours=ls_rfst
        label="$kind, SD session quarter ($(fsize_mb "$f" 2>/dev/null || echo '?') MB)"
        if [ ! -f "$f" ]; then add_row "$label" "-" "skipped: $f could not be made"; continue; fi
        cases=()
        [ "$WL_OK" = 1 ] && cases+=("$peer")
        if [ "$LS_OK" = 1 ] && check_latscope "$ours"; then cases+=("$ours"); fi
        echo "timing $label: ${cases[*]:-nothing}"
        [ ${#cases[@]} = 0 ] || time_row "${cases[@]}"
        report_case "$label" "$ours"
        if [ "$WL_OK" = 1 ]; then report_case "$label" "$peer" "$ours"; else add_row "$label" "wellen_load" "skipped: no wellen_load binary"; fi
    done
fi

# one long analog channel
if want analog; then
    for kind in sr csv; do
        f=$ANSR ours=ls_ansr; [ $kind = csv ] && f=$ANCSV ours=ls_ancsv
        if [ ! -f "$f" ]; then
            echo "generating $f (bench/make_analog.py $kind)"
            python3 "$BENCH/make_analog.py" $kind "$f.part" && mv "$f.part" "$f"
        fi
        label="analog 48M samples, $kind ($(fsize_mb "$f") MB)"
        if [ "$LS_OK" = 1 ] && check_latscope "$ours"; then echo "timing $label"; time_row "$ours"; fi
        report_case "$label" "$ours"
    done
fi

# ---------------------------------------------------------------- table
echo
echo "Medians of $REPS alternating runs on $(uname -n) ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)); ratio = peer / latscope"
{
    printf 'input\tcommand\twall median\tmin..max\tCPU median\tpeak RSS\tthroughput\tratio\t\n'
    printf '%s\n' "${ROWS[@]}"
} | column -t -s $'\t'
for i in "${!NOTES[@]}"; do echo "[$((i + 1))] ${NOTES[$i]}"; done
echo "goals: trace.dat ratio >= 10x; ftrace text >= 300 MB/s; decode ratio >= 50x (SD session shape: >= 12x);"
echo "       open SD session shape: ratio >= 0.67 (at most 1.5x the ISA-L inflate); analog < 5 s; workbench < 300 MB"
