#!/usr/bin/env python3
"""One-sided gnubg tables built with fixed32 distributions (the default for --format gnubg)
against the same tables with --precision f64 (every entry exactly rounded): how many of gnubg's
16-bit entries differ, and by how much.

    python3 benches/bearoff_fixed32.py > results/bearoff/bearoff-fixed32.txt
"""
import os
import struct
import subprocess
import tempfile

ROLLSIM = os.environ.get("ROLLSIM", "target/release/rollsim")


def entries(path):
    b = open(path, "rb").read()
    points, checkers = int(b[9:11]), int(b[12:14])
    from math import comb
    n = comb(points + checkers, points)
    out = []
    for i in range(n):
        off, nz, io, nzg, iog = struct.unpack_from("<IBBBB", b, 40 + 8 * i)
        vals = struct.unpack_from("<%dH" % (nz + nzg), b, 40 + 8 * n + 2 * off)
        d, g = [0] * 32, [0] * 32
        for k in range(nz):
            d[io + k] = vals[k]
        for k in range(nzg):
            g[iog + k] = vals[nz + k]
        out.append(d + g)
    return out


with tempfile.TemporaryDirectory(dir=".") as tmp:
    for points in (6, 8):
        files = {}
        for precision in ("fixed32", "f64"):
            files[precision] = os.path.join(tmp, f"{precision}.bd")
            cmd = [ROLLSIM, "bearoff", "build", "--points", str(points), "--format", "gnubg",
                   "--precision", precision, "--out", files[precision], "-q"]
            subprocess.run(cmd, check=True, capture_output=True)
        a, b = entries(files["fixed32"]), entries(files["f64"])
        total = sum(len(x) for x in a)
        diff = [abs(u - v) for x, y in zip(a, b) for u, v in zip(x, y) if u != v]
        print(f"15x{points}: {len(diff)} of {total} entries differ, largest difference "
              f"{max(diff, default=0)} unit(s) of 1/65535 "
              f"(rollsim bearoff build --points {points} --format gnubg [--precision f64])")
