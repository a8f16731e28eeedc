#!/usr/bin/env python3
"""The cost of one GEMM dimension at 273 instead of 272 (no multiple of 8 elements), from calibrate's bf16 rows:
for each of m, n, k, the time at 273 over the time at 272 with the other two dimensions from {272, 2048, 2816},
the median of those nine shapes and the range of the four at 2048 and 2816. Run on the profiles of two executor
versions (gpu1-2026-12-07-gemm-align: every GEMM as the TN call; gpu1-2026-12-08-gemm-layout: the token count
kept out of the leading dimensions, src/program/gemm_storage.hpp), it shows what the layouts took off.

    python3 launch/studies/unaligned_gemms.py \\
        results/gpu1-2026-12-07-gemm-align/gemm-align/calibration-bf16.json \\
        results/gpu1-2026-12-08-gemm-layout/call1-layout/calibration-bf16.json
"""

import argparse
import json
import statistics

from study_files import open_data

OTHERS = (272, 2048, 2816)


def rows(path):
    doc = json.load(open_data(path))
    return {(r["m"], r["n"], r["k"]): r["seconds"] for r in doc["gemm"] if r["dtype"] == "bf16" and r["batch"] == 1}


def shape(dim, at, a, b):
    dims = [a, b]
    dims.insert(dim, at)
    return tuple(dims)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profiles", nargs="+", help="calibrate profiles with bf16 rows at 272, 273, 2048 and 2816")
    args = p.parse_args()
    print("| profile | dimension at 273 | median of 9 shapes | others at 2048 and 2816 |")
    print("|---|---|---|---|")
    for path in args.profiles:
        t = rows(path)
        for dim, label in enumerate("mnk"):
            ratios = {(a, b): t[shape(dim, 273, a, b)] / t[shape(dim, 272, a, b)] for a in OTHERS for b in OTHERS}
            large = [r for (a, b), r in ratios.items() if a >= 2048 and b >= 2048]
            print(f"| {path} | {label} | {statistics.median(ratios.values()):.2f}x | "
                  f"{min(large):.2f}-{max(large):.2f}x |")


if __name__ == "__main__":
    main()
