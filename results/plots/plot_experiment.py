#!/usr/bin/env python3
"""Plots a `rollsim 2048 experiment` results file: reach rates against rollouts per move (with
95% Wilson intervals) and the score distribution per rollout count.
Run from the repository root:
    python3 results/plots/plot_experiment.py results/2048/experiment-mc-sweep.jsonl
(needs matplotlib); writes the PNG beside the file (same name, .png)."""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

path = sys.argv[1]
lines = [json.loads(l) for l in open(path) if l.strip()]
header, games = lines[0], lines[1:]
ns = sorted({g["n"] for g in games})


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (p, c - h, c + h)


fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 5))
for tile in (2048, 4096, 8192):
    pts = []
    for n in ns:
        at = [g for g in games if g["n"] == n]
        pts.append(wilson(sum(g["max_tile"] >= tile for g in at), len(at)))
    ax.errorbar(ns, [100 * p for p, _, _ in pts],
                yerr=[[100 * (p - lo) for p, lo, _ in pts], [100 * (hi - p) for p, _, hi in pts]],
                marker="o", capsize=3, label=f"reached {tile}")
ax.set_xscale("log")
ax.set_xlabel("rollouts per move")
ax.set_ylabel("% of games (95% Wilson interval)")
ax.set_title(f"Monte Carlo player, objective {header['objective']}, seed {header['seed']}")
ax.legend()
ax.grid(alpha=0.3)
scores, labels = [[g["score"] for g in games if g["n"] == n] for n in ns], [str(n) for n in ns]
try:
    bx.boxplot(scores, tick_labels=labels)
except TypeError:  # matplotlib before 3.9 (Debian 12 has 3.6)
    bx.boxplot(scores, labels=labels)
bx.set_xlabel("rollouts per move")
bx.set_ylabel("score")
bx.set_title(f"score distribution, {len(games) // len(ns)} games per point")
bx.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(path.rsplit(".", 1)[0] + ".png", dpi=100)
