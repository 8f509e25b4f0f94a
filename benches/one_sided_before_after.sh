#!/usr/bin/env bash
# Whole-process wall time of the 15x8 and 15x6 one-sided gnubg builds, two binaries
# alternating, seven runs each: bash benches/one_sided_before_after.sh OLD/rollsim NEW/rollsim
set -euo pipefail
old=$1 new=$2 out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for points in 8 6; do
    for k in 1 2 3 4 5 6 7; do
        for b in old new; do
            bin=${!b}
            s=$(date +%s.%N)
            "$bin" bearoff build --points "$points" --format gnubg --out "$out/$b.bd" -q >/dev/null 2>&1
            e=$(date +%s.%N)
            echo "15x$points $b $(echo "$e - $s" | bc)"
        done
    done
    cmp "$out/old.bd" "$out/new.bd" && echo "15x$points: the same bytes"
done | python3 -c '
import sys, statistics, collections
t = collections.defaultdict(list)
for line in sys.stdin:
    if "bytes" in line:
        print(line.strip())
        continue
    table, which, secs = line.split()
    t[table, which].append(float(secs))
for (table, which), v in sorted(t.items()):
    print(table, which, "median %.3f s of %d runs:" % (statistics.median(v), len(v)), " ".join("%.3f" % x for x in v))
'
