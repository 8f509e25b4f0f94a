#!/usr/bin/env python3
"""rollsim against gnubg's makebearoff, side by side: the same tables in gnubg's format, whole
process, wall time and peak memory from /usr/bin/time -v, each run alternating between the two.

    python3 benches/compare_makebearoff.py [--runs 3] [--only NAME ...] > results/bearoff/bearoff-vs-makebearoff.md

Writes results/bearoff/bearoff-vs-makebearoff.json too; with --only, the other tables' rows are kept
from it as they were measured (each row has its date). makebearoff is Debian's (package gnubg).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROLLSIM = os.environ.get("ROLLSIM", "target/release/rollsim")
MAKEBEAROFF = os.environ.get("MAKEBEAROFF", "/usr/games/makebearoff")

TABLES = [
    # name, makebearoff arguments, rollsim arguments, most runs (makebearoff takes minutes)
    ("one-sided 15x6", ["-o", "6"], ["--points", "6"], 99),
    ("one-sided 15x8", ["-o", "8"], ["--points", "8"], 99),
    ("one-sided 15x10", ["-o", "10"], ["--points", "10"], 1),
    ("two-sided 6x6 cubeful", ["-t", "6x6"], ["--two-sided", "--checkers", "6", "--cubeful"], 99),
    ("two-sided 8x6 cubeful", ["-t", "6x8"], ["--two-sided", "--checkers", "8", "--cubeful"], 2),
]


def timed(cmd):
    """Wall seconds and peak RSS (bytes) of one whole process. The wall time is this script's
    clock around /usr/bin/time and the process: time's own figure has 10 ms steps, a sixth of
    the 15x6 build."""
    start = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{cmd} failed: {out.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1)) * 1024
    return seconds, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        for name, mb_args, rs_args, most in TABLES:
            if args.only and name not in args.only:
                continue
            mb_out, rs_out = os.path.join(tmp, "mb.bd"), os.path.join(tmp, "rs.bd")
            mb = [MAKEBEAROFF] + mb_args + ["-f", mb_out]
            rs = [ROLLSIM, "bearoff", "build"] + rs_args + ["--format", "gnubg", "--out", rs_out, "-q"]
            runs = {"makebearoff": [], "rollsim": []}
            for _ in range(min(args.runs, most)):
                runs["makebearoff"].append(timed(mb))
                runs["rollsim"].append(timed(rs))
            with open(mb_out, "rb") as f:
                mb_head, mb_size = f.read(40), os.path.getsize(mb_out)
            with open(rs_out, "rb") as f:
                rs_head, rs_size = f.read(40), os.path.getsize(rs_out)
            row = {
                "table": name,
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "makebearoff_command": " ".join(["makebearoff"] + mb_args + ["-f", "OUT"]),
                "rollsim_command": " ".join(["rollsim", "bearoff", "build"] + rs_args + ["--format", "gnubg", "--out", "OUT", "-q"]),
                "same_header": mb_head == rs_head,
                "bytes": [mb_size, rs_size],
            }
            for tool, r in runs.items():
                row[tool] = {
                    "seconds": [s for s, _ in r],
                    "runs": len(r),
                    "median_seconds": statistics.median(s for s, _ in r),
                    "peak_rss_bytes": max(m for _, m in r),
                }
            row["speedup"] = row["makebearoff"]["median_seconds"] / row["rollsim"]["median_seconds"]
            row["memory_ratio"] = row["rollsim"]["peak_rss_bytes"] / row["makebearoff"]["peak_rss_bytes"]
            rows.append(row)
            print(f"{name}: {row['speedup']:.1f}x", file=sys.stderr)
    if args.only:
        try:
            with open("results/bearoff/bearoff-vs-makebearoff.json") as f:
                old = json.load(f)
        except FileNotFoundError:
            old = {"tables": []}
        new = {r["table"]: r for r in rows}
        kept = {r["table"]: dict(r, date=r.get("date", old.get("date"))) for r in old["tables"]}
        kept.update(new)
        rows = [kept[name] for name, *_ in TABLES if name in kept]
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} threads",
        "runs": args.runs,
        "tables": rows,
    }
    with open("results/bearoff/bearoff-vs-makebearoff.json", "w") as f:
        json.dump(record, f, indent=1)
    print(f"# rollsim against makebearoff (median of up to {args.runs} alternating runs, whole process)\n")
    print("| table | measured | runs | rollsim | makebearoff | ratio | peak memory rollsim / makebearoff | same header and size |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['table']} | {r['date']} | {r['rollsim']['runs']} | {r['rollsim']['median_seconds']:.3f} s | {r['makebearoff']['median_seconds']:.2f} s "
            f"| {r['speedup']:.0f}x | {r['rollsim']['peak_rss_bytes'] / 2**20:.0f} / "
            f"{r['makebearoff']['peak_rss_bytes'] / 2**20:.0f} MiB ({r['memory_ratio']:.2f}x) "
            f"| {'yes' if r['same_header'] and r['bytes'][0] == r['bytes'][1] else 'no'} |"
        )
    print("\nCommands: " + "; ".join(f"`{r['rollsim_command']}` vs `{r['makebearoff_command']}`" for r in rows))


if __name__ == "__main__":
    main()
