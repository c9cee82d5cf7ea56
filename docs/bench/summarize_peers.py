#!/usr/bin/env python3
"""Medians and per-round ratios of docs/bench/cpu_vs_peers.sh's and docs/bench/kquants.sh's output
(stdin): every figure is the median over the rounds, and a ratio is the median of the ratios taken
within each round (the runs of one round are adjacent in time, so a slow moment affects both
sides). Runs are named kvs-M, llama-M, runc-M, ... for each model or file M."""
import re
import statistics
import sys

runs = {}  # name -> {round: {key: value}}
for line in sys.stdin:
    m = re.match(r"round=(\d+) (\S+) (.*)", line)
    if not m:
        continue
    vals = {}
    for k, v in re.findall(r"(\w+)=(\S+)", m.group(3)):
        try:
            vals[k] = float(v)
        except ValueError:
            pass
    runs.setdefault(m.group(2), {})[int(m.group(1))] = vals


def med(name, key):
    xs = [r[key] for r in runs.get(name, {}).values() if key in r and r[key] not in (0, float("inf"))]
    return (statistics.median(xs), min(xs), max(xs), len(xs)) if xs else None


def ratio(a, b, key):
    xs = [runs[a][r][key] / runs[b][r][key] for r in runs.get(a, {}) if r in runs.get(b, {})
          and runs[a][r].get(key) and runs[b][r].get(key) not in (None, 0, float("inf"))]
    return (statistics.median(xs), min(xs), max(xs), len(xs)) if xs else None


for name in sorted(runs):
    parts = []
    for key in ("decode_tok_s", "prefill_ms", "wall", "rss_kib"):
        s = med(name, key)
        if s:
            parts.append(f"{key} {s[0]:.4g} [{s[1]:.4g}..{s[2]:.4g}] n={s[3]}")
    print(f"{name:20s} " + " | ".join(parts))
for model in sorted({n[len("kvs-"):] for n in runs if n.startswith("kvs-")}):
    for a, b, key in ((f"kvs-{model}", f"runc-{model}", "decode_tok_s"),
                      (f"kvs-{model}", f"llama-{model}", "decode_tok_s"),
                      (f"t2-{model}", f"t1-{model}", "decode_tok_s"),
                      (f"ttft-kvs-{model}", f"ttft-runc-{model}", "wall"),
                      (f"ttft-kvs-{model}", f"ttft-llama-{model}", "wall")):
        r = ratio(a, b, key)
        if r:
            print(f"ratio {a}/{b} {key}: median {r[0]:.3f} [{r[1]:.3f}..{r[2]:.3f}] rounds={r[3]}")
