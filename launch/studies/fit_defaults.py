#!/usr/bin/env python3
"""The default (catalog-only) compute model's constants, fitted to calibrate's rows on one H200.

    python3 launch/studies/fit_defaults.py \
        results/h200x1-2026-12-02b/run-2/cal.json results/h200x1-2026-12-03/run-4/cal.json

GEMM (bf16 rows): time = max(flops / (peak x E x tiles x depth), bytes / (4800 GB/s x 4273/4800)) + O, the
form of src/predict/compute_model.cpp (tiles: 128 x 128 output tiles over 132 SMs, split-K in shares of
Kc where the tiles fill fewer SMs; depth k' / (k' + D)). Memory (the generic rows: the step's memory
kernel, read half, write half): time = bytes / (4800 GB/s x M) + Om. Prints the grid's best by the 90th
percentile of |log(model / measured)| and the figures of the chosen and the former constants. Step
times are not read: the constants are checked against them in accuracy/, not fitted to them.
"""
import json
import math
import statistics
import sys

from study_files import open_data

PEAK, SMS, TILE, BW = 989.5e12, 132, 128, 4800e9


def gemm_time(r, e, depth_overhead, call_s, split_depth):
    m, n, k, b = r["m"], r["n"], r["k"], r.get("batch", 1)
    tiles = math.ceil(m / TILE) * math.ceil(n / TILE) * b
    split = max(1, min(SMS // tiles, k // split_depth)) if split_depth and tiles < SMS else 1
    waves = math.ceil(tiles * split / SMS)
    quantized = min(1.0, m * n * b * split / (waves * SMS * TILE * TILE))
    share = k / split
    eff = e * quantized * share / (share + depth_overhead)
    memory = 2 * (m * k + k * n + m * n) * b / (BW * 4273 / 4800)
    return max(2 * m * n * k * b / (PEAK * eff), memory) + call_s


def errors(rows, time):
    return sorted(abs(math.log(time(r) / r["seconds"])) for r in rows)


def summary(errs):
    return f"median {statistics.median(errs):.3f}, p90 {errs[int(0.9 * len(errs))]:.3f}, max {errs[-1]:.3f}"


def main():
    gemm, memory = [], []
    for path in sys.argv[1:]:
        profile = json.load(open_data(path))
        gemm += [r for r in profile["gemm"] if r["dtype"] == "bf16"]
        memory += [r for r in profile["memory"] if "kind" not in r]
    print(f"{len(gemm)} bf16 GEMM rows, {len(memory)} memory rows from {len(sys.argv) - 1} profiles")
    grid = []
    for e in (0.78, 0.80, 0.82, 0.84, 0.86):
        for d in (64, 128, 192, 256):
            for o in (2e-6, 4e-6, 5e-6, 6e-6):
                for kc in (0, 256, 512, 1024, 2048):
                    errs = errors(gemm, lambda r: gemm_time(r, e, d, o, kc))
                    grid.append((errs[int(0.9 * len(errs))], statistics.median(errs), e, d, o, kc))
    grid.sort()
    print("GEMM grid, best 5 by p90: " + "; ".join(f"E {g[2]} D {g[3]} O {g[4] * 1e6:g} us Kc {g[5]}: "
                                                   f"p90 {g[0]:.3f} median {g[1]:.3f}" for g in grid[:5]))
    print("GEMM chosen  (E 0.80, D 128, 6 us, Kc 256): " + summary(errors(gemm, lambda r: gemm_time(r, 0.80, 128, 6e-6, 256))))
    print("GEMM before  (E 0.70, D 128, 2 us, no split): " + summary(errors(gemm, lambda r: gemm_time(r, 0.70, 128, 2e-6, 0))))
    for m, o in ((0.74, 4.5e-6), (0.76, 4.5e-6), (0.78, 4.5e-6), (0.80, 4.5e-6)):
        print(f"memory M {m} Om {o * 1e6:g} us: " + summary(errors(memory, lambda r: r["bytes"] / (BW * m) + o)))
    print("memory before (4273/4800, 2 us): " + summary(errors(memory, lambda r: r["bytes"] / 4273e9 + 2e-6)))


if __name__ == "__main__":
    main()
