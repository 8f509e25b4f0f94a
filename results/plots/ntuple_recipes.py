#!/usr/bin/env python3
"""The learning curves of the two training recipes, against games and against hours.

  python3 results/plots/ntuple_recipes.py TC_LOG TD0_JSON

TC_LOG is the standard output of the TC run (`rollsim 2048 train ... --tc ...`, one line per
block of games); TD0_JSON the `--json` report of the TD(0) run. Writes
results/2048/ntuple-recipes.csv (one row per block of each run: recipe, games, hours, mean and max
score, reach rates, moves/s) and, where matplotlib is installed (Debian: python3-matplotlib,
run with /usr/bin/python3), results/2048/ntuple-recipes.png."""
import csv
import json
import re
import sys

TILES = (2048, 4096, 8192, 16384, 32768, 65536)
LINE = re.compile(r"^games\s+(\d+)\s+mean\s+([\d.]+)\s+max\s+(\d+)\s+(.*?)\s+([\d.]+) M moves/s\s+([\d.]+) s$")


def tc_rows(path):
    hours = 0.0
    for line in open(path):
        m = LINE.match(line.strip())
        if not m:
            continue
        games, mean, top, reach, mps, secs = m.groups()
        rates = dict(re.findall(r"(\d+)\s+([\d.]+)%", reach))
        hours += float(secs) / 3600
        yield {
            "recipe": "tc-lambda-0.5",
            "games": int(games),
            "hours": round(hours, 5),
            "mean_score": float(mean),
            "max_score": int(top),
            **{f"reach_{t}": float(rates.get(str(t), 0)) / 100 for t in TILES},
            "moves_per_s": float(mps) * 1e6,
        }


def td0_rows(path):
    hours = 0.0
    for b in json.load(open(path))["curve"]:
        hours += b["seconds"] / 3600
        yield {
            "recipe": "td0",
            "games": b["games"],
            "hours": round(hours, 5),
            "mean_score": b["mean_score"],
            "max_score": b["max_score"],
            **{f"reach_{t}": b["reach"].get(str(t), 0.0) for t in TILES},
            "moves_per_s": b["moves_per_s"],
        }


rows = list(tc_rows(sys.argv[1])) + list(td0_rows(sys.argv[2]))
with open("results/2048/ntuple-recipes.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)

try:
    import matplotlib
except ImportError:
    sys.exit("matplotlib is not installed: wrote the CSV only")
matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
labels = {"td0": "TD(0), alpha 0.1", "tc-lambda-0.5": "TC, alpha 1, TD(lambda 0.5)"}
for recipe, label in labels.items():
    r = [x for x in rows if x["recipe"] == recipe]
    ax.plot([x["games"] for x in r], [x["mean_score"] for x in r], lw=1, label=label)
    bx.plot([x["hours"] for x in r], [x["mean_score"] for x in r], lw=1, label=label)
ax.set_xlabel("training games")
ax.set_ylabel("mean score of the block's training games")
bx.set_xlabel("hours of training (2 threads)")
for a in (ax, bx):
    a.grid(alpha=0.3)
    a.legend()
fig.suptitle("standard 4x6-tuple network, greedy training play")
fig.tight_layout()
fig.savefig("results/2048/ntuple-recipes.png", dpi=100)
