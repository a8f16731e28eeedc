#!/usr/bin/env python3
"""Offline diagnosis (no GPU), fitted on the checked runs themselves, so a reading and not a check: per
block kind, the host's forward and backward time of the stack and of the host-bound runs (medians over
host_ladder.py's rounds) as F x microbatches + L x layers x microbatches (least squares), and each
one's residual.

    python3 launch/studies/host_per_layer.py results/h200x1-2026-12-03d/run-19/ladder/ladder.jsonl
"""
import json
import statistics
import sys

from study_files import open_data

KINDS = {  # block kind: (stack or run id, layers, microbatches)
    "gpt sdpa": [("gpt-sdpa", 4, 2), ("g2048-s1024-mb1-sdpa", 4, 4), ("g1024-s512-mb8-sdpa", 8, 4),
                 ("g1024-s1024-mb4-l24-sdpa", 24, 4)],
    "gpt unfused": [("gpt-unfused", 4, 2), ("g2048-s1024-mb1-unfused", 4, 4), ("g1024-s512-mb8-unfused", 8, 4),
                    ("g1024-s1024-mb4-l24-unfused", 24, 4)],
    "llama sdpa": [("llama-sdpa", 4, 2), ("q05-s512-mb1-sdpa", 8, 4)],
    "llama unfused": [("llama-unfused", 4, 2), ("q05-s512-mb1-unfused", 8, 4)],
}


def main():
    host = {}
    for line in open_data(sys.argv[1]):
        row = json.loads(line)
        if row.get("kind") in ("stack", "run"):
            host.setdefault(row["id"], []).append(row["host_s"]["fwd"] + row["host_s"]["bwd"])
    print("| block kind | per microbatch | per layer and microbatch | stack or run (layers x microbatches): fwd + bwd, model |")
    print("|---|---|---|---|")
    for kind, points in KINDS.items():
        ys = [statistics.median(host[i]) * 1e3 for i, _, _ in points]
        xs = [(mb, layers * mb) for _, layers, mb in points]
        a11 = sum(x[0] * x[0] for x in xs)
        a12 = sum(x[0] * x[1] for x in xs)
        a22 = sum(x[1] * x[1] for x in xs)
        b1 = sum(x[0] * y for x, y in zip(xs, ys))
        b2 = sum(x[1] * y for x, y in zip(xs, ys))
        det = a11 * a22 - a12 * a12
        f, per_layer = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
        cells = []
        for (name, layers, mb), y in zip(points, ys):
            model = f * mb + per_layer * layers * mb
            cells.append(f"{name} ({layers} x {mb}): {y:.1f} ms, {100 * (model / y - 1):+.1f}%")
        print(f"| {kind} | {f:.2f} ms | {per_layer:.3f} ms | {'; '.join(cells)} |")


if __name__ == "__main__":
    main()
