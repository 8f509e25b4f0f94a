#!/usr/bin/env python3
"""rollsim against TDL2048+ (moporgic/TDL2048, built with its own makefile: `make`), one
thread each, side by side on this machine, runs alternating:

  python3 benches/tdl2048_compare.py ROLLSIM TDL2048 [--runs 3] [--games 20000]
  python3 benches/tdl2048_compare.py --report results/2048/tdl2048-compare.json   (the table again)

For each recipe (TD(0) alpha 0.1; TC alpha 1 with TD(lambda 0.5)) it trains the standard 4x6
network for --games games with each tool, then plays 10,000 greedy games with the network just
trained (TDL2048+'s "testing"), and reports moves/s of both phases (each tool's own count of
moves over its own time) and whole-process wall time of training. Prints a Markdown table;
writes results/2048/tdl2048-compare.json with every run."""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("rollsim", nargs="?")
ap.add_argument("tdl", nargs="?")
ap.add_argument("--report", help="print the table of an earlier run's JSON, running nothing")
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--games", type=int, default=20000)
args = ap.parse_args()
tmp = tempfile.mkdtemp()
RECIPES = {
    "TD(0), alpha 0.1": ([], ["-a", "0.1"]),
    "TC alpha 1, TD(lambda 0.5)": (["--tc", "--alpha", "1", "--lambda", "0.5"], ["-a", "1.0", "coherence", "-l", "0.5"]),
}


def timed(cmd):
    t = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return out, time.monotonic() - t


def rollsim(extra, seed):
    net = os.path.join(tmp, "r.bin")
    out, wall = timed([args.rollsim, "2048", "train", "--games", str(args.games), "--threads", "1",
                       "--seed", str(seed), "--out", net, "--force", "--json", "-q", *extra])
    train = json.loads(out)
    play, _ = timed([args.rollsim, "2048", "play", "--player", "ntuple", "--weights", net,
                     "--games", "10000", "--threads", "1", "--seed", str(seed), "--json", "-q"])
    test = json.loads(play)
    return {"train_moves_per_s": train["moves_per_s"], "train_wall_s": wall,
            "test_moves_per_s": test["moves_per_s"], "test_mean": test["score"]["mean"]}


BLOCK = re.compile(r"^\d+/\d+ (\d+)ms ([\d.]+)ops")


def blocks(text):
    """TDL2048+'s per-block lines: (milliseconds, moves/s)."""
    return [(int(m.group(1)), float(m.group(2))) for m in map(BLOCK.match, text.splitlines()) if m]


def rate(bs):
    moves = sum(ms * ops / 1000 for ms, ops in bs)
    return moves / (sum(ms for ms, _ in bs) / 1000)


def tdl(extra, seed):
    net = os.path.join(tmp, "t.w")
    out, wall = timed([args.tdl, "-n", "4x6patt", "-t", str(args.games // 1000), "-s", str(seed),
                       "-o", net, *extra])
    train = blocks(out)
    out, _ = timed([args.tdl, "-n", "4x6patt", "-i", net, "-e", "10", "-s", str(seed)])
    test = blocks(out.split("evaluate:")[1])
    mean = float(re.findall(r"total:\s+avg=(\d+)", out)[-1])
    return {"train_moves_per_s": rate(train), "train_wall_s": wall,
            "test_moves_per_s": rate(test), "test_mean": mean}


if args.report:
    saved = json.load(open(args.report))
    args.games, runs = saved["games"], saved["runs"]
else:
    runs = []
    for recipe, (r_extra, t_extra) in RECIPES.items():
        for k in range(args.runs):
            for tool, f, extra in (("rollsim", rollsim, r_extra), ("TDL2048+", tdl, t_extra)):
                r = f(extra, k + 1)
                runs.append({"recipe": recipe, "tool": tool, "run": k + 1, **r})
                print(json.dumps(runs[-1]), flush=True)
    json.dump({"games": args.games, "runs": runs}, open("results/2048/tdl2048-compare.json", "w"), indent=1)


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


print(f"\n| recipe ({args.games} training games, 1 thread; median of {max(r['run'] for r in runs)} runs) | tool | training moves/s | training wall | testing moves/s (10,000 greedy games) | test mean score |")
print("|---|---|---|---|---|---|")
for recipe in RECIPES:
    for tool in ("rollsim", "TDL2048+"):
        rs = [r for r in runs if r["recipe"] == recipe and r["tool"] == tool]
        print(f"| {recipe} | {tool} | {median([r['train_moves_per_s'] for r in rs]) / 1e6:.2f} M "
              f"| {median([r['train_wall_s'] for r in rs]):.1f} s "
              f"| {median([r['test_moves_per_s'] for r in rs]) / 1e6:.2f} M "
              f"| {median([r['test_mean'] for r in rs]):.0f} |")
