#!/usr/bin/env python3
"""The catalog-only compute model's constants for eager PyTorch's kernels, fitted to the eager rows that
launch/pytorch_kernels.py timed on one H200 (run-11: torch 2.11, GPT and Llama blocks):

    python3 launch/studies/fit_eager_defaults.py \
        results/h200x1-2026-12-03b/run-11/cal-eager.json results/h200x1-2026-12-03b/run-11/cal-eager-llama.json

    # SDPA's factor on another GEMM default (kGemmEfficiency, kGemmCallUs of src/predict/compute_model.hpp):
    python3 launch/studies/fit_eager_defaults.py --gemm-efficiency 0.71 --gemm-call-us 8 ...

Memory kernels of the eager set: time = bytes / (4800 GB/s x E[kind, phase]) + 4.5 us (the generic
kernel's call time, src/predict/compute_model.hpp), E the median over a curve's rows of the efficiency
each row implies. Llama's activation rows (SwiGLU as the block runs it: two reads per value written)
are a curve of their own ("gated"), told apart from GELU's by that ratio, as the predictor does.

Fused attention (one kernel for the flash products: PyTorch's SDPA, flash-attn): the default GEMM
efficiency of each product (the form of compute_model.cpp: E x tiles x depth and a call time per product;
E 0.80 and 6 us, the catalog's, unless --gemm-efficiency and --gemm-call-us say otherwise) times a factor F[phase, dropout], the median over the rows of the catalog's time over the measured one.

Prints each constant with the spread of |log(model / measured)| over its rows. Step times are not read:
the constants are checked against them (accuracy/), not fitted to them.
"""
import json
import math
import statistics
import sys

from study_files import open_data

PEAK, SMS, TILE, BW = 989.5e12, 132, 128, 4800e9
CALL_S = 4.5e-6
GEMM = {"efficiency": 0.80, "call_s": 6e-6}  # the GEMM default SDPA's factor multiplies (options can change it)


def spread(errors):
    errors = sorted(errors)
    return f"median |log err| {statistics.median(errors):.3f}, max {errors[-1]:.3f} over {len(errors)} rows"


def default_efficiency(m, n, k, b):
    tiles = math.ceil(m / TILE) * math.ceil(n / TILE) * b
    split = max(1, min(SMS // tiles, k // 256)) if tiles < SMS else 1
    waves = math.ceil(tiles * split / SMS)
    quantized = min(1.0, m * n * b * split / (waves * SMS * TILE * TILE))
    share = k / split
    return GEMM["efficiency"] * quantized * share / (share + 128)


def causal_keys(seq):
    return seq if seq < 128 else (seq + 128) // 2


def flash_products(seq, d, batch, backward):
    """(m, n, k, batch) of each product the step program counts (src/workload/layer_ops.cpp)."""
    keys = causal_keys(seq)
    scores, context = (seq, keys, d, batch), (seq, d, keys, batch)
    if not backward:
        return [scores, context]
    return [scores, scores, context, context, context]  # recomputed scores, dP; dV, dQ, dK


def catalog_attention_s(row):
    total = 0.0
    for m, n, k, b in flash_products(row["seq"], row["head_dim"], row["batch"], row["phase"] == "bwd"):
        total += 2.0 * m * n * k * b / (PEAK * default_efficiency(m, n, k, b)) + GEMM["call_s"]
    return total


def memory_curves(profiles):
    curves = {}
    for path in profiles:
        for r in json.load(open_data(path))["memory"]:
            if r.get("kernels") != "eager":
                continue
            kind = r["kind"]
            if kind == "activation" and "silu" in r.get("kernel", ""):
                kind = "gated activation"
            curve = curves.setdefault((kind, r["phase"]), {})
            curve[r["bytes"]] = r["seconds"]  # the two profiles share their generic rows: once each
    return curves


def main():
    args = sys.argv[1:]
    for flag, key, scale in (("--gemm-efficiency", "efficiency", 1.0), ("--gemm-call-us", "call_s", 1e-6)):
        if flag in args:
            i = args.index(flag)
            GEMM[key] = float(args[i + 1]) * scale
            del args[i:i + 2]
    profiles = args
    if not profiles:
        sys.exit(__doc__)
    print("# memory kernels, eager: E[kind, phase] (bytes / (4800 GB/s x E) + 4.5 us)")
    for (kind, phase), curve in sorted(memory_curves(profiles).items()):
        implied = [b / (BW * max(t - CALL_S, 1e-9)) for b, t in curve.items()]
        e = statistics.median(implied)
        errors = [abs(math.log((b / (BW * e) + CALL_S) / t)) for b, t in curve.items()]
        print(f"{kind:>17} {phase}  E {e:.2f}  {spread(errors)}")
    print(f"# fused attention: F[phase, dropout] (catalog time / measured; GEMM default E {GEMM['efficiency']:g}, "
          f"{GEMM['call_s'] * 1e6:g} us per product)")
    rows = json.load(open_data(profiles[0]))["attention"]
    for phase in ("fwd", "bwd"):
        for dropout in (False, True):
            group = [r for r in rows if r["phase"] == phase and bool(r.get("dropout")) == dropout]
            if not group:
                continue
            ratios = [catalog_attention_s(r) / r["seconds"] for r in group]
            f = statistics.median(ratios)
            errors = [abs(math.log(catalog_attention_s(r) / f / r["seconds"])) for r in group]
            print(f"{phase} dropout {str(dropout).lower():>5}  F {f:.3f}  {spread(errors)}")


if __name__ == "__main__":
    main()
