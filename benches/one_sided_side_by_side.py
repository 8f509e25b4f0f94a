#!/usr/bin/env python3
"""One-sided gnubg builds (15 checkers, with first-off distributions) with the two passes one
after the other (OLD, e0a2837) and side by side (NEW, d0130c9): whole process, alternating runs,
medians, and the files compared byte for byte.

    python3 benches/one_sided_side_by_side.py OLD/rollsim NEW/rollsim [--runs 7] > results/bearoff/one-sided-side-by-side.txt
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("old")
ap.add_argument("new")
ap.add_argument("--runs", type=int, default=7)
a = ap.parse_args()
print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {a.runs} alternating runs each")
with tempfile.TemporaryDirectory(dir=".") as tmp:
    for points in (6, 8):
        times = {"old": [], "new": []}
        for _ in range(a.runs):
            for label, binary in (("old", a.old), ("new", a.new)):
                out = os.path.join(tmp, f"{label}.bd")
                if os.path.exists(out):
                    os.remove(out)
                cmd = [binary, "bearoff", "build", "--points", str(points), "--format", "gnubg",
                       "--out", out, "-q"]
                start = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times[label].append(time.perf_counter() - start)
        same = filecmp.cmp(os.path.join(tmp, "old.bd"), os.path.join(tmp, "new.bd"), shallow=False)
        print(f"15x{points}: one after the other {statistics.median(times['old']):.3f} s, "
              f"side by side {statistics.median(times['new']):.3f} s, same bytes: {same}; "
              f"runs old {[round(t, 3) for t in times['old']]} new {[round(t, 3) for t in times['new']]}")
print("Command: rollsim bearoff build --points P --format gnubg --out OUT -q")
