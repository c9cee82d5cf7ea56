#!/usr/bin/python3
"""Plot the CSV written by `kvscope-cli bench --csv FILE` into one PNG.

usage: /usr/bin/python3 tools/plot_bench.py BENCH.csv OUT.png

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib); nothing in the build
does. Panels: decode and prefill throughput by length (median, bars from min to max), total
generation time by length on log-log axes with the bench's fitted exponents, and the per-op
share of time at the longest length.
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MEASURES = {
    "decode_cached": ("decode, KV cache", "tab:blue"),
    "decode_uncached": ("decode, no cache (recompute)", "tab:red"),
    "prefill_batched": ("prefill, batched", "tab:green"),
    "prefill_token_by_token": ("prefill, token by token", "tab:orange"),
}
OPS = ["matmul", "attention", "rmsnorm", "rope", "swiglu", "add", "kv_append", "embed", "transfer"]


def read(path):
    header, rows = [], []
    with open(path, newline="") as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                header.append(line[1:].strip())
            else:
                lines.append(line)
    for r in csv.DictReader(lines):
        for k in ("min", "median", "max"):
            r[k] = float(r[k])
        rows.append(r)
    return header, rows


def series(rows, measure, metric):
    pts = [(int(r["length"]), r) for r in rows
           if r["measure"] == measure and r["metric"] == metric and r["length"] != "all"]
    pts.sort(key=lambda p: p[0])
    return [p[0] for p in pts], [p[1] for p in pts]


def value(rows, length, measure, metric):
    for r in rows:
        if r["length"] == length and r["measure"] == measure and r["metric"] == metric:
            return r["median"]
    return None


def throughput(ax, rows, measures, title):
    for m in measures:
        xs, rs = series(rows, m, "tokens_per_s")
        if not xs:
            continue
        label, color = MEASURES[m]
        med = [r["median"] for r in rs]
        err = [[r["median"] - r["min"] for r in rs], [r["max"] - r["median"] for r in rs]]
        ax.errorbar(xs, med, yerr=err, marker="o", capsize=3, label=label, color=color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("length L (tokens)")
    ax.set_ylabel("tokens / s (median; bars: min..max)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def growth(ax, rows):
    for m in ("decode_cached", "decode_uncached"):
        xs, rs = series(rows, m, "total_seconds")
        if not xs:
            continue
        label, color = MEASURES[m]
        ys = [r["median"] for r in rs]
        k = value(rows, "all", m, "growth_exponent")
        ax.plot(xs, ys, "o", color=color)
        if k is not None and len(xs) >= 2:
            # the least-squares line through the points' log-mean, with the bench's exponent
            lx = sum(math.log(x) for x in xs) / len(xs)
            ly = sum(math.log(y) for y in ys) / len(ys)
            fit = [math.exp(ly + k * (math.log(x) - lx)) for x in xs]
            ax.plot(xs, fit, "-", color=color, label=f"{label}: time ~ L^{k:.2f}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("new tokens L")
    ax.set_ylabel("whole generation, seconds (median)")
    ax.set_title("growth of total cost with length (fitted)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def op_shares(ax, rows):
    lengths = sorted({int(r["length"]) for r in rows if r["length"] != "all"})
    measures = [m for m in MEASURES if value(rows, str(lengths[-1]), m, "op_matmul") is not None]
    # the longest length every measure reached, so the bars compare like with like
    L = max(l for l in lengths
            if all(value(rows, str(l), m, "op_matmul") is not None for m in measures))
    colors = plt.get_cmap("tab10")
    for i, m in enumerate(measures):
        times = [value(rows, str(L), m, "op_" + op) or 0.0 for op in OPS]
        total = sum(times)
        left = 0.0
        for j, (op, t) in enumerate(zip(OPS, times)):
            share = 100 * t / total if total > 0 else 0
            ax.barh(i, share, left=left, color=colors(j), label=op if i == 0 else None)
            left += share
    ax.set_yticks(range(len(measures)), [MEASURES[m][0] for m in measures], fontsize=8)
    ax.set_xlabel("% of time inside ops (measured per op)")
    ax.set_title(f"where the time goes at L = {L}")
    ax.set_xlim(0, 100)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    header, rows = read(sys.argv[1])
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    throughput(axes[0][0], rows, ["decode_cached", "decode_uncached"], "decode throughput")
    throughput(axes[0][1], rows, ["prefill_batched", "prefill_token_by_token"],
               "prefill throughput")
    growth(axes[1][0], rows)
    op_shares(axes[1][1], rows)
    title = [h for h in header if h.startswith(("kvscope-cli bench", "backend", "machine"))]
    fig.suptitle("\n".join(title), fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
