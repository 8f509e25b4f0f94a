#!/usr/bin/env python3
"""Compares experiment files of the mc player's spending options with the plain player's at
the same budget: per file, the mean score and the reach rates of 2048 and 4096, and against the
first file (the plain player) the difference in mean score with its 95% interval (normal
approximation, the two samples independent) and in each reach rate (two-proportion, normal).

    python3 benches/mc_spending.py PLAIN.jsonl OTHER.jsonl ...   (a Markdown table on stdout)
"""
import json
import math
import sys


def load(path):
    with open(path) as f:
        header = json.loads(f.readline())
        games = [json.loads(line) for line in f if line.strip()]
    spending = header.get("spending", {})
    name = " + ".join(k for k, on in (("CRN", spending.get("common")), ("race", spending.get("race"))) if on)
    return header, name or "plain", games


def stats(games):
    s = [g["score"] for g in games]
    n = len(s)
    mean = sum(s) / n
    var = sum((x - mean) ** 2 for x in s) / (n - 1)
    reach = {t: sum(g["max_tile"] >= t for g in games) / n for t in (2048, 4096)}
    sim = sum(g["simulated_moves"] for g in games)
    return n, mean, var, reach, (sim / n, sim / sum(g["moves"] for g in games))


def main(paths):
    rows = [(p, *load(p)) for p in paths]
    budgets = {tuple(h["rollouts"]) for _, h, _, _ in rows}
    seeds = {h["seed"] for _, h, _, _ in rows}
    if len(budgets) != 1 or len(seeds) != 1:
        sys.exit("the files must share their rollouts and seed")
    bn, bmean, bvar, breach, _ = stats(rows[0][3])
    print(f"rollouts a candidate {budgets.pop()[0]}, seed {seeds.pop()}; differences against {rows[0][2]} with 95% intervals\n")
    print("| player | games | mean score | difference | 2048 | difference | 4096 | difference | simulated moves a game | a move played |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, (_, _, name, games) in enumerate(rows):
        n, mean, var, reach, sim = stats(games)
        # The plain player's own row has no differences.
        differ = k > 0
        d = mean - bmean
        h = 1.96 * math.sqrt(var / n + bvar / bn)
        cells = [name, str(n), f"{mean:,.0f}", f"{d:+,.0f} [{d - h:+,.0f}, {d + h:+,.0f}]" if differ else ""]
        for t in (2048, 4096):
            p, q = reach[t], breach[t]
            e = 1.96 * math.sqrt(p * (1 - p) / n + q * (1 - q) / bn)
            cells.append(f"{100 * p:.1f}%")
            cells.append(f"{100 * (p - q):+.1f} [{100 * (p - q - e):+.1f}, {100 * (p - q + e):+.1f}]" if differ else "")
        cells += [f"{sim[0]:.3e}", f"{sim[1]:,.0f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
