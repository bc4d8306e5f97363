#!/usr/bin/env python3
"""Writes the rule_spec fuzz seeds to fuzz/corpus/rule_spec: every string literal in
analysis/tests/*.rs, every code span and code-block line (and --rule/--preset argument) in
docs/ARCHITECTURE.md, and the preset names. Run from the project root."""
import glob, hashlib, os, re

seeds = set()
for f in glob.glob("analysis/tests/*.rs") + glob.glob("analysis/tests/common/*.rs"):
    s = open(f).read()
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', s):
        seeds.add(m.group(1).replace('\\"', '"').replace("\\\\", "\\"))
    for m in re.finditer(r'r#"(.*?)"#', s, re.S):
        seeds.add(m.group(1))
a = open("docs/ARCHITECTURE.md").read()
seeds.update(re.findall(r"`([^`\n]+)`", a))
for m in re.finditer(r"```[a-z]*\n(.*?)```", a, re.S):
    seeds.update(l.strip() for l in m.group(1).splitlines())
seeds.update(re.findall(r"--(?:rule|preset)[ =]'([^']*)'", a))
seeds.update("block irq-handler softirq wakeup idle irqs-off mmc cmd-irq chain pulse:D1 pulse:A0".split())
seeds.update(["stall:D0", "long:A0 over 10us", "poll:block_rq_issue within 1ms"])
os.makedirs("fuzz/corpus/rule_spec", exist_ok=True)
kept = [s for s in seeds if s and len(s) < 400]
for s in kept:
    with open("fuzz/corpus/rule_spec/" + hashlib.sha1(s.encode()).hexdigest(), "w") as f:
        f.write(s)
print(len(kept), "seeds")
