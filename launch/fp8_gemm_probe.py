#!/usr/bin/env python3
"""FP8 against BF16 GEMMs at transformer layer shapes, through PyTorch, on one GPU.

For each shape (tokens x out x in, the forward GEMMs of a layer: QKV, attention projection, MLP up and
down), times torch.matmul in bf16 and torch._scaled_mm in float8_e4m3fn with per-tensor scales (what
TransformerEngine's delayed scaling issues for a forward GEMM), with FP32 accumulation and with the fast
(reduced-precision) accumulation, plus the cast that per-tensor scaling adds: the amax of the bf16 input
and its scaled cast to FP8. CUDA events around `--calls` back-to-back calls, median of `--trials`.

    python3 launch/fp8_gemm_probe.py -o fp8-gemm.json

Writes JSON (machine, rows: shape, dtype, accumulate, median us per call, TFLOP/s) and prints a table.
"""
import argparse
import json
import statistics
import sys


# (model, gemm, n_out, k_in): forward GEMMs of one layer on one tensor-parallel rank.
SHAPES = [
    ("llama2-7b tp1", "qkv", 3 * 4096, 4096),
    ("llama2-7b tp1", "proj", 4096, 4096),
    ("llama2-7b tp1", "gate+up", 2 * 11008, 4096),
    ("llama2-7b tp1", "down", 4096, 11008),
    ("gpt3-175b tp8", "qkv", 3 * 12288 // 8, 12288),
    ("gpt3-175b tp8", "proj", 12288, 12288 // 8),
    ("gpt3-175b tp8", "fc1", 4 * 12288 // 8, 12288),
    ("gpt3-175b tp8", "fc2", 12288, 4 * 12288 // 8),
    ("square", "8192", 8192, 8192),
]


def timed_us(fn, calls, trials):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(per_call)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--out", required=True, help="JSON file to write")
    parser.add_argument("--tokens", default="4096,8192", help="GEMM rows (micro-batch x sequence), comma-separated")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--trials", type=int, default=7)
    args = parser.parse_args()
    global torch  # imported after the arguments, so that --help runs where PyTorch is not installed
    import torch
    if not torch.cuda.is_available():
        sys.exit("fp8_gemm_probe: no CUDA device")
    tokens = [int(t) for t in args.tokens.split(",")]
    fp8 = torch.float8_e4m3fn
    one = torch.ones((), device="cuda", dtype=torch.float32)
    rows = []
    for m in tokens:
        for model, gemm, n, k in SHAPES:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
            x8, w8 = x.to(fp8), w.to(fp8)
            flops = 2.0 * m * n * k
            runs = {
                ("bf16", "fp32"): lambda: torch.matmul(x, w.t()),
                ("fp8-e4m3", "fp32"): lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                                                out_dtype=torch.bfloat16, use_fast_accum=False),
                ("fp8-e4m3", "fast"): lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                                                out_dtype=torch.bfloat16, use_fast_accum=True),
            }
            for (dtype, accumulate), fn in runs.items():
                us = timed_us(fn, args.calls, args.trials)
                rows.append({"tokens": m, "model": model, "gemm": gemm, "m": m, "n": n, "k": k, "dtype": dtype,
                             "accumulate": accumulate, "us": us, "tflops": flops / us / 1e6})
            # Per-tensor scaling of the input: its amax, then the scaled cast (one read, one FP8 write).
            cast_us = timed_us(lambda: (x * (448.0 / x.abs().amax())).to(fp8), args.calls, args.trials)
            rows.append({"tokens": m, "model": model, "gemm": gemm, "m": m, "n": n, "k": k, "dtype": "cast",
                         "accumulate": "", "us": cast_us, "tflops": 0.0,
                         "bytes": m * k * 2 * 3 + m * k})  # amax reads x; the cast reads x, writes x and fp8
            del x, w, x8, w8
    props = torch.cuda.get_device_properties(0)
    doc = {"kind": "fp8-gemm-probe", "gpu": props.name, "sm_count": props.multi_processor_count,
           "torch": torch.__version__, "cuda": torch.version.cuda, "calls": args.calls, "trials": args.trials,
           "rows": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{props.name}, torch {torch.__version__}: TFLOP/s per call (median of {args.trials} x {args.calls})")
    print(f"{'tokens':>6} {'model':<14} {'gemm':<8} {'bf16':>7} {'fp8':>7} {'fp8 fast':>8} {'fp8/bf16':>8} {'cast us':>8}")
    for i in range(0, len(rows), 4):
        b, f32, fast, cast = rows[i:i + 4]
        print(f"{b['tokens']:>6} {b['model']:<14} {b['gemm']:<8} {b['tflops']:7.0f} {f32['tflops']:7.0f} "
              f"{fast['tflops']:8.0f} {f32['tflops'] / b['tflops']:8.2f} {cast['us']:8.1f}")


if __name__ == "__main__":
    main()
