#!/usr/bin/env python3
"""Flash attention's products as commscale's executor runs them (one cuBLASLt GEMM call each, the
sequence x keys matrix in HBM: runtime/step_buffers.cpp), priced by the catalog alone against
`calibrate`'s GEMM rows of the same shapes (flash_products.md):

    python3 launch/studies/flash_products.py \
        results/h200x1-2026-12-03c/run-15/cal.json results/h200x1-2026-12-03c/run-16/cal.json \
        results/h200x1-2026-12-03d/run-17/cal.json > results/h200x1-2026-12-03d/flash_products.txt

The catalog's form is src/predict/compute_model.cpp's (0.80, 128 x 128 tiles over 132 SMs, split-K in
shares of 256, depth k / (k + 128), 6 us a call; memory roofline at 4800 GB/s x 4273 / 4800). Two byte
counts: "fused" counts no bytes for the sequence x keys operand (the catalog before this change, for
every framework), "all" counts every operand and result (the change, for AttentionIssue::kPerProduct).
Printed: measured / catalog, median by row class (batch 1; batched QK^T-shaped, k <= 128; batched
PV-shaped, n <= 128), and each product shape of the 12 `train` points' flash runs. Step times are not
read: the rows are separate measurements, the steps the check (accuracy/).
"""
import json
import math
import statistics
import sys

from study_files import open_data

PEAK, SMS, TILE, BW, MEM = 989.5e12, 132, 128, 4800e9, 4273 / 4800


def math_s(m, n, k, b):
    tiles = math.ceil(m / TILE) * math.ceil(n / TILE) * b
    split = max(1, min(SMS // tiles, k // 256)) if tiles < SMS else 1
    waves = math.ceil(tiles * split / SMS)
    quantized = min(1.0, m * n * b * split / (waves * SMS * TILE * TILE))
    share = k / split
    return 2 * m * n * k * b / (PEAK * 0.80 * quantized * share / (share + 128))


def bytes_of(m, n, k, b, fused):
    operands = ((m, k), (k, n), (m, n))
    head = min(m, n, k)
    return sum(2 * r * c * b for r, c in operands if not fused or b == 1 or head in (r, c))


def catalog_s(m, n, k, b, fused):
    return max(math_s(m, n, k, b), bytes_of(m, n, k, b, fused) / (BW * MEM)) + 6e-6


def row_class(m, n, k, b):
    if b == 1:
        return "batch 1"
    return "QK^T-shaped (k <= 128)" if k <= 128 else "PV-shaped (n <= 128)"


# (point, heads x micro-batch, seq, head size): the 12 points' flash runs (run-17/train/commands.txt).
POINTS = [
    ("g4096-s8192-mb1", 32, 8192, 128),
    ("l8b-s4096-mb1", 32, 4096, 128),
    ("g2048-h32-s4096-mb1", 32, 4096, 64),
    ("g4096-s2048-mb1", 32, 2048, 128),
    ("g2048-s2048-mb2", 32, 2048, 128),
    ("l2048-s2048-mb2", 32, 2048, 128),
    ("l70-s2048-mb1", 64, 2048, 128),
    ("g2048-s1024-mb1", 16, 1024, 128),
    ("q05-s512-mb1", 14, 512, 64),
]


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit(__doc__)
    runs = []
    for path in paths:
        rows = {}
        for r in json.load(open_data(path))["gemm"]:
            if r["dtype"] == "bf16":
                rows[(r["m"], r["n"], r["k"], r.get("batch", 1))] = r["seconds"]
        runs.append(rows)
    print("measured / catalog, median over rows above 20 GFLOP (all rows), per profile; bytes fused | all:")
    for cls in ("batch 1", "QK^T-shaped (k <= 128)", "PV-shaped (n <= 128)"):
        cells = []
        for rows in runs:
            for big in (True, False):
                shapes = [s for s in rows if row_class(*s) == cls and (not big or 2 * math.prod(s) > 20e9)]
                f = statistics.median(rows[s] / catalog_s(*s, True) for s in shapes)
                a = statistics.median(rows[s] / catalog_s(*s, False) for s in shapes)
                cells.append(f"{f:.3f} | {a:.3f}" + ("" if big else f" ({len(shapes)} rows)"))
        print(f"  {cls:24s} " + "; ".join(f"{cells[2 * i]} [{cells[2 * i + 1]}]" for i in range(len(runs))))
    print()
    print("each point's products, catalog fused / all (us), rows per profile (us), measured / catalog-all:")
    for name, batch, seq, head in POINTS:
        keys = seq if seq < 128 else (seq + 128) // 2
        for label, shape in (("QK^T, dP   x3", (seq, keys, head, batch)), ("PV, dV, dQ, dK x4", (seq, head, keys, batch))):
            measured = [rows.get(shape) for rows in runs]
            fused, full = catalog_s(*shape, True), catalog_s(*shape, False)
            have = [t for t in measured if t is not None]
            print(f"  {name:20s} {label:18s} {'x'.join(map(str, shape)):18s} {fused * 1e6:7.1f} / {full * 1e6:7.1f}  "
                  + " ".join(f"{t * 1e6:7.1f}" if t else "      -" for t in measured)
                  + ("  " + " ".join(f"{t / full:.2f}" for t in have) if have else ""))


if __name__ == "__main__":
    main()
