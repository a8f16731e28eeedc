#!/usr/bin/env python3
"""Where a predicted step's time goes against where PyTorch's went, by kernel category.

Reads a PyTorch kernel profile (launch/pytorch_reference.py --profile FILE: GPU time per kernel name of
one step) and a commscale Chrome trace of the same step (commscale predict --trace FILE, or train
--trace FILE), sums both by category (GEMMs, flash attention, and op.hpp's memory kernel kinds) and
prints them side by side in ms per step, with the difference. A PyTorch kernel is put in a category
by its name (the table below); one that matches none is "other" and is listed.

    python3 launch/kernel_categories.py prof-unfused-mb2.json trace-unfused-mb2.json

The trace's ops are grouped by their own fields: a GEMM by "gemm" in its args, a memory kernel by its
"kernel" kind. With flash attention commscale's attention is GEMMs (`--flash-attn`) where PyTorch's is
cuDNN's fused kernels, so the two sides' "GEMM + flash" lines are the ones to compare.
"""

import argparse
import json
import re
import sys

# PyTorch kernel name (regular expression) -> category; first match wins.
PYTORCH_KERNELS = [
    (r"^nvjet|gemm|cutlass|cublas", "GEMM"),
    (r"cudnn|flash|philox", "flash"),
    (r"masked_fill", "mask"),
    (r"softmax|SoftMax", "softmax"),
    (r"fused_dropout|masked_scale", "dropout"),
    (r"Memcpy DtoD", "copy"),
    (r"CatArray|direct_copy", "permute"),
    (r"CUDAFunctor_add", "add"),
    (r"layer_norm|GammaBeta", "norm"),
    (r"Gelu|silu|Silu", "activation"),
    (r"reduce_kernel.*sum_functor", "bias_grad"),
    (r"FusedAdam|multi_tensor_apply", "optimizer"),
    (r"MulFunctor", "mul"),
    (r"^Memset", "memset"),
]


def pytorch_categories(path):
    with open(path) as f:
        doc = json.load(f)
    sums, unmatched = {}, {}
    for row in doc["kernels"]:
        name = row["kernel"]
        category = next((c for pattern, c in PYTORCH_KERNELS if re.search(pattern, name)), "other")
        if category == "other":
            unmatched[name] = unmatched.get(name, 0.0) + row["gpu_us"]
        sums[category] = sums.get(category, 0.0) + row["gpu_us"] * 1e-3
    return sums, unmatched, doc.get("gpu_busy_us", 0.0) * 1e-3


def trace_categories(path, rank):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    sums = {}
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != rank or e.get("cat", "compute") != "compute":
            continue
        args = e.get("args", {})
        category = "GEMM" if "gemm" in args else args.get("kernel")
        if category is None:
            continue  # communication
        sums[category] = sums.get(category, 0.0) + e["dur"] * 1e-3
    return sums


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", help="launch/pytorch_reference.py --profile output")
    parser.add_argument("trace", help="commscale predict --trace (or train --trace) output")
    parser.add_argument("--rank", type=int, default=0, help="the trace's rank (pid) to sum")
    args = parser.parse_args()
    try:
        theirs, unmatched, busy = pytorch_categories(args.profile)
        ours = trace_categories(args.trace, args.rank)
    except (OSError, json.JSONDecodeError, KeyError) as e:
        sys.exit(f"kernel_categories.py: {e}")
    categories = sorted(set(theirs) | set(ours), key=lambda c: -max(theirs.get(c, 0.0), ours.get(c, 0.0)))
    print(f"{'category':<14} {'PyTorch ms':>11} {'commscale ms':>13} {'difference':>11}")
    for c in categories:
        a, b = theirs.get(c, 0.0), ours.get(c, 0.0)
        print(f"{c:<14} {a:>11.2f} {b:>13.2f} {b - a:>+11.2f}")
    a, b = sum(theirs.values()), sum(ours.values())
    print(f"{'all':<14} {a:>11.2f} {b:>13.2f} {b - a:>+11.2f}   (PyTorch GPU busy {busy:.2f} ms)")
    for name, us in sorted(unmatched.items(), key=lambda x: -x[1]):
        print(f"# other: {us * 1e-3:.2f} ms  {name[:120]}")


if __name__ == "__main__":
    main()
