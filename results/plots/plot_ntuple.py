#!/usr/bin/env python3
"""Plots results/2048/ntuple-learning-curve.csv (mean score per 1,000 training games) as
results/ntuple-learning-curve.png, with TDL2048+'s published block means for comparison.
Run from the repository root: python3 results/plots/plot_ntuple.py (needs matplotlib)."""
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open("results/2048/ntuple-learning-curve.csv")))
games = [int(r["games"]) for r in rows]
mean = [float(r["mean_score"]) for r in rows]
reach = {t: [100 * float(r[f"reach_{t}"]) for r in rows] for t in (2048, 4096, 8192)}

fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 8), sharex=True)
ax.plot(games, mean, lw=1, label="rollsim, mean score per 1,000 games")
# TDL2048+'s mean score per block of 10,000 games, as quoted in issue 5.
ax.plot([20000, 100000, 200000], [26600, 61400, 90600], "o", label="TDL2048+ (10,000-game blocks)")
ax.set_ylabel("mean score")
ax.set_title("4x6-tuple network, TD(0), alpha 0.1, 2 threads, seed 1")
ax.legend()
ax.grid(alpha=0.3)
for t, v in reach.items():
    bx.plot(games, v, lw=1, label=f"reached {t}")
bx.set_xlabel("training games")
bx.set_ylabel("% of games")
bx.legend()
bx.grid(alpha=0.3)
fig.tight_layout()
fig.savefig("results/2048/ntuple-learning-curve.png", dpi=100)
