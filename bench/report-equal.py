#!/usr/bin/env python3
"""bench/report-equal.py A B: `latscope report` of two binaries (before/after a change) on
every .sr file (target/bench-data/demo_5M.sr, samples/sigrok, ../shared/corpus/sigrok),
every channel, every format, several rule mixes; prints each difference in stdout, stderr,
exit code or Parquet bytes, then a count. Run from anywhere; paths are the project's."""
import glob, json, os, subprocess, sys, tempfile
TMP = tempfile.mkdtemp(prefix="latscope-report-equal-")
A, B = sys.argv[1], sys.argv[2]
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
files = ["target/bench-data/demo_5M.sr"] + sorted(glob.glob("samples/sigrok/*.sr")) + sorted(glob.glob("../shared/corpus/sigrok/*.sr"))
def run(bin, args):
    p = subprocess.run([bin, "report"] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr
n = bad = 0
def check(args, out=None):
    global n, bad
    n += 1
    ra = run(A, args + (["-o", os.path.join(TMP, "a." + out)] if out else []))
    rb = run(B, args + (["-o", os.path.join(TMP, "b." + out)] if out else []))
    if out:
        ra = ra + (open(os.path.join(TMP, "a." + out), "rb").read() if ra[0] == 0 else b"",)
        rb = rb + (open(os.path.join(TMP, "b." + out), "rb").read() if rb[0] == 0 else b"",)
    if ra != rb:
        bad += 1
        print("DIFF", args, out, ra[0], rb[0], ra[2][:200], rb[2][:200])
q = lambda name: '"' + name + '"'
for f in files:
    info = json.loads(subprocess.run([A, "info", "--json", f], capture_output=True).stdout)
    chans = [t["name"] for s in info["sources"] for t in s["tracks"]]
    if f.endswith("demo_5M.sr"):
        chans = ["D1", "D0"]
    first, last = q(chans[0]), q(chans[-1])
    for ch in chans:
        c = q(ch)
        for rules in (["--rule", f"pulse:{c}"],
                      ["--rule", f"pulse:{c}:low", "--rule", f"stall:{first}"],
                      ["--rule", f"pulse:{c}", "--rule", f"long:{last}:low over 1us"],
                      ["--rule", f"{c}:rise -> {last}:fall"]):
            for fmt in ("json", "md", "csv", "html"):
                check([f] + rules + ["--format", fmt])
            check([f] + rules, out="parquet")
    for args in (["--rule", "pulse:NOPE"], ["--rule", f"pulse:{first}", "--rule", "pulse:NOPE"], [],
                 ["--rule", f"pulse:{first}", "--preset", "irq-handler"], [f, "--rule", f"pulse:{first}"]):
        check([f] + args)
print(f"compared {n} runs, {bad} differences")
