#!/usr/bin/env python3
"""Whole-process timings of commands run in turn, the order reversed every run, so that a
machine's drift falls on all of them alike:

    python3 benches/alternate.py RUNS PAUSE_SECONDS 'CMD A' 'CMD B' ...

Prints per command the median, mean, interquartile mean and minimum wall seconds (the
script's own clock around each process; output discarded).
"""
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    runs, pause = int(sys.argv[1]), float(sys.argv[2])
    cmds = sys.argv[3:]
    seconds = {c: [] for c in cmds}
    for r in range(runs):
        for c in cmds if r % 2 == 0 else cmds[::-1]:
            start = time.perf_counter()
            subprocess.run(c, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            seconds[c].append(time.perf_counter() - start)
            time.sleep(pause)
    for c in cmds:
        x = sorted(seconds[c])
        quartiles = x[len(x) // 4 : len(x) - len(x) // 4]
        print(
            f"median {statistics.median(x):.4f}  mean {statistics.mean(x):.4f}  "
            f"iqm {statistics.mean(quartiles):.4f}  min {x[0]:.4f}  {c}"
        )


if __name__ == "__main__":
    main()
