#!/usr/bin/env python3
"""The Monte Carlo rollout kernel on lavapipe, before and after the workgroup reduction, and
lockstep games with each step waited for against two alternating halves.

    python3 benches/mc_kernel_lavapipe.py OLD/rollsim NEW/rollsim [--runs 3] > results/2048/mc-kernel-lavapipe.md

OLD and NEW are rollsim binaries (before: global atomics per rollout; after: workgroup sums).
Each run is `rollsim bench --only rollouts --backend gpu --roots R --rollouts N --seconds 3
--json` for every (R, N) below, old and new alternating; then `rollsim bench --only mc-games
--backend gpu --json` with NEW. Kernel time comes from timestamp queries (the bench's
`gpu_kernel_seconds`); the device-busy share is kernel time over the workload's wall time.
Writes the JSON of every run to results/2048/mc-kernel-lavapipe.json. lavapipe runs on the CPU's
cores: it shows overheads and correctness, not a GPU's speed.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

SHAPES = [(256, 256), (16, 10000)]


def bench(binary, args):
    out = subprocess.run([binary, "bench", "--backend", "gpu", "--json"] + args,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{binary} {args} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    record = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rollouts": [], "games": []}
    for roots, n in SHAPES:
        for run in range(a.runs):
            for label, binary in (("before", a.old), ("after", a.new)):
                r = bench(binary, ["--only", "rollouts", "--roots", str(roots), "--rollouts", str(n),
                                   "--seconds", "3"])
                m = r["measurements"][0]
                record["rollouts"].append({
                    "kernel": label, "roots": roots, "rollouts": n, "run": run,
                    "rollouts_per_s": m["figure"], "seconds": m["seconds"],
                    "kernel_seconds": r["gpu_kernel_seconds"],
                    "busy": r["gpu_kernel_seconds"] / m["seconds"],
                })
    for run in range(a.runs):
        r = bench(a.new, ["--only", "mc-games"])
        for m in r["measurements"]:
            if m["backend"] != "gpu":
                continue
            extra = dict(m["extra"])
            record["games"].append({
                "workload": m["workload"], "run": run, "rollouts_per_s": m["figure"],
                "game_moves_per_s": extra["game moves/s"], "seconds": m["seconds"],
                "busy": extra.get("% device busy", float("nan")) / 100,
            })
    with open("results/2048/mc-kernel-lavapipe.json", "w") as f:
        json.dump(record, f, indent=1)
    print(f"# The rollout kernel on lavapipe ({record['date']}, medians of {a.runs} alternating runs)\n")
    print("| roots x rollouts | kernel | rollouts/s | kernel time / wall time |")
    print("|---|---|---|---|")
    for roots, n in SHAPES:
        for label in ("before", "after"):
            rs = [r for r in record["rollouts"] if r["kernel"] == label and r["roots"] == roots and r["rollouts"] == n]
            print(f"| {roots} x {n} | {label} | {statistics.median(r['rollouts_per_s'] for r in rs):,.0f} "
                  f"| {100 * statistics.median(r['busy'] for r in rs):.1f}% |")
    print("\n| Monte Carlo games | rollouts/s | game moves/s | device busy |")
    print("|---|---|---|---|")
    for w in dict.fromkeys(g["workload"] for g in record["games"]):
        gs = [g for g in record["games"] if g["workload"] == w]
        print(f"| {w} | {statistics.median(g['rollouts_per_s'] for g in gs):,.0f} "
              f"| {statistics.median(g['game_moves_per_s'] for g in gs):,.0f} "
              f"| {100 * statistics.median(g['busy'] for g in gs):.1f}% |")
    print(f"\nCommand: `python3 benches/mc_kernel_lavapipe.py OLD/rollsim NEW/rollsim --runs {a.runs}`")


if __name__ == "__main__":
    main()
