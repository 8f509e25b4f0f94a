#!/usr/bin/env bash
# Precision of rollsim's two-sided tables: each cell type against the f64 build of the same table.
#   bash benches/bearoff_precision.sh DIR > results/bearoff/bearoff-precision.jsonl
# DIR holds the tables (10x6: 0.5 GB of f64 cubeful; 13x6 cubeless f64: 3.1 GB).
set -euo pipefail
R=${ROLLSIM:-target/release/rollsim}
dir=$1
build() { "$R" bearoff build --two-sided --points 6 -q "$@" >/dev/null; }
for c in 10; do
    for p in f64 f32 u16 fixed32; do build --checkers $c --cubeful --precision $p --out "$dir/c$c-$p.rsb"; done
    for p in f32 u16 fixed32; do
        echo "{\"table\":\"${c}x6 cubeful\",\"cell\":\"$p\",\"command\":\"rollsim bearoff compare c$c-$p.rsb c$c-f64.rsb --json\",\"result\":$("$R" bearoff compare "$dir/c$c-$p.rsb" "$dir/c$c-f64.rsb" --json)}"
    done
done
for c in 13; do
    for p in f64 f32; do build --checkers $c --precision $p --out "$dir/w$c-$p.rsb"; done
    echo "{\"table\":\"${c}x6 cubeless\",\"cell\":\"f32\",\"command\":\"rollsim bearoff compare w$c-f32.rsb w$c-f64.rsb --json\",\"result\":$("$R" bearoff compare "$dir/w$c-f32.rsb" "$dir/w$c-f64.rsb" --json)}"
done
