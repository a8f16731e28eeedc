#!/usr/bin/env python3
"""The `megatron` host row of topologies/frameworks.json from results/h100x1-2026-12-06's measurements.

Megatron-Core's host time per layer and microbatch (megatron_host.py, two runs) is divided by what the
eager PyTorch row measured in the same device call on the same host (eager-host-rows.json) charges for
commscale's program of the same layer (--framework megatron-lm --no-flash-attn, which is the attention
that ran: the local layer spec's unfused DotProductAttention). The per-phase factors, measured on one
host, scale the catalog's eager row (measured on the H200 machine's host), so the machine's host speed
cancels out. Step, collective and p2p costs are not measured on Megatron and stay the eager row's.

    python3 launch/studies/derive_row.py --commscale build/src/commscale [--folder results/h100x1-2026-12-06]

(This script was results/h100x1-2026-12-06/derive_row.py; its inputs are read as FILE or FILE.gz.)
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import tempfile

from study_files import open_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.path.join(ROOT, "results", "h100x1-2026-12-06")
SHAPE = ["--framework", "megatron-lm", "--no-flash-attn", "--hidden-size", "256", "--num-attention-heads", "4",
         "--seq-length", "128", "--max-position-embeddings", "128", "--vocab-size", "1024",
         "--micro-batch-size", "1", "--global-batch-size", "4", "--bf16"]


def program(commscale, layers, where):
    path = os.path.join(where, f"program-{layers}.json")
    subprocess.run([commscale, "plan", "--num-layers", str(layers), *SHAPE, "--dump-program", path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)["programs"][0]


def per_layer_cost(ops_a, ops_b, layers_a, layers_b, microbatches, row):
    """Host microseconds one layer adds per microbatch, by phase, priced with `row`'s issue_us."""
    def total(ops):
        t = collections.defaultdict(float)
        for op in ops:
            phase = "fwd" if op["phase"] in ("fwd", "recompute") else op["phase"]
            cls = {"gemm": "gemm", "memory": "kernel"}.get(op["type"], op["type"])
            t[phase] += row.get(f"{phase}.{cls}", row.get(cls, 0.0))
        return t
    a, b = total(ops_a), total(ops_b)
    return {p: (b[p] - a[p]) / (layers_b - layers_a) / microbatches for p in ("fwd", "bwd")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commscale", required=True)
    parser.add_argument("--folder", default=FOLDER, help="the measurements' folder (default: %(default)s)")
    args = parser.parse_args()
    runs = [json.load(open_data(os.path.join(args.folder, f))) for f in ("megatron-host-nofusion.json", "megatron-host.json")]
    measured = {p: statistics.fmean(r["per_layer_us"][p] for r in runs) for p in ("fwd", "bwd")}
    same_host = next(h for h in json.load(open_data(os.path.join(args.folder, "eager-host-rows.json")))["host"]
                     if h["framework"] == "pytorch-eager")["issue_us"]
    catalog = next(f for f in json.load(open(os.path.join(ROOT, "topologies", "frameworks.json")))["frameworks"]
                   if f["framework"] == "pytorch-eager")["issue_us"]
    with tempfile.TemporaryDirectory() as where:
        two, four = program(args.commscale, 2, where), program(args.commscale, 4, where)
    priced = per_layer_cost(two, four, 2, 4, 4, same_host)
    factor = {p: measured[p] / priced[p] for p in ("fwd", "bwd")}
    print(f"Megatron-Core per layer and microbatch (mean of two runs): fwd {measured['fwd']:.0f} us, "
          f"bwd {measured['bwd']:.0f} us")
    print(f"commscale's program of that layer at the same host's eager row: fwd {priced['fwd']:.0f} us, "
          f"bwd {priced['bwd']:.0f} us")
    print(f"factors: fwd {factor['fwd']:.3f}, bwd {factor['bwd']:.3f}")
    row = {k: round(v * factor[k.split(".")[0]], 3) if k.split(".")[0] in factor else v for k, v in catalog.items()}
    print("megatron issue_us:", json.dumps(row))


if __name__ == "__main__":
    main()
