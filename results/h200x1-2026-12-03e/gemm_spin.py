#!/usr/bin/env python3
"""Is a tiny GEMM's calibrated time the GPU's or the host's? calibrate times GEMM calls issued back to
back with a CUDA event between calls (src/runtime/cuda/probe_timing.cpp); when one call's launch takes
the host longer than the kernel takes the GPU, the interval between events is the host's launch time.
Here the same kind of timing with torch.matmul at small shapes, two ways in alternation: the calls issued
from an idle GPU (as calibrate does), and the calls queued behind a spin kernel that outlasts their
issue (the GPU's own time per call, back to back). Median interval per call, several rounds.

    python3 results/h200x1-2026-12-03e/gemm_spin.py > gemm_spin.txt
"""

import statistics
import time

import torch

SHAPES = [(256, 256, 256, 1), (512, 512, 512, 1), (1024, 1024, 256, 1), (512, 512, 64, 14), (512, 64, 512, 14),
          (1024, 1024, 1024, 1), (2048, 2048, 2048, 1), (4096, 4096, 4096, 1)]
CALLS = 200
ROUNDS = 5


def intervals(a, b, spin_cycles):
    events = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS + 1)]
    torch.cuda.synchronize()
    if spin_cycles:
        torch.cuda._sleep(spin_cycles)
    t = time.perf_counter()
    events[0].record()
    for i in range(CALLS):
        torch.matmul(a[i % len(a)], b[i % len(b)])
        events[i + 1].record()
    issued = time.perf_counter() - t
    torch.cuda.synchronize()
    per = [events[i].elapsed_time(events[i + 1]) * 1e3 for i in range(CALLS)]
    return statistics.median(per), issued / CALLS * 1e6


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}; median us per call over {CALLS} calls; "
          "host: the host's issue time per call (matmul + event record)")
    print("| m x n x k x batch | idle GPU: interval / host | behind a spin: interval / host | ratio |")
    print("|---|---|---|---|")
    for m, n, k, batch in SHAPES:
        sets = 8
        shape_a = (batch, m, k) if batch > 1 else (m, k)
        shape_b = (batch, k, n) if batch > 1 else (k, n)
        a = [torch.randn(shape_a, dtype=torch.bfloat16, device="cuda") for _ in range(sets)]
        b = [torch.randn(shape_b, dtype=torch.bfloat16, device="cuda") for _ in range(sets)]
        for _ in range(3):
            intervals(a, b, 0)
        idle, spun = [], []
        for _ in range(ROUNDS):
            idle.append(intervals(a, b, 0))
            spun.append(intervals(a, b, 100_000_000))
        i_t = statistics.median(x[0] for x in idle)
        i_h = statistics.median(x[1] for x in idle)
        s_t = statistics.median(x[0] for x in spun)
        s_h = statistics.median(x[1] for x in spun)
        print(f"| {m} x {n} x {k} x {batch} | {i_t:.2f} / {i_h:.2f} | {s_t:.2f} / {s_h:.2f} | {i_t / s_t:.2f} |", flush=True)


if __name__ == "__main__":
    main()
