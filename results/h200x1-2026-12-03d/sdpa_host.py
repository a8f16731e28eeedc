#!/usr/bin/env python3
"""Does an SDPA call cost the host more at some shapes? (run-19: the same GPT SDPA block cost 1.71-2.20
ms a layer and microbatch at three shapes, its unfused twin 2.30-2.44.) Chains of 16
F.scaled_dot_product_attention calls (each output the next query; keys and values leaves of their own),
then a loss and its backward, at the stacks' shape and the host-bound runs' attention shapes, without
and with dropout 0.1; host time per call forward and backward (perf_counter over the chain, median of
10 steps after 3), in interleaved rounds in one process.

    mpirun -np 1 --bind-to none python3 results/h200x1-2026-12-03d/sdpa_host.py --out DIR
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launch"))
CALLS = 16
SHAPES = {  # batch, query heads, key/value heads, seq, head size
    "stack-h256-s128": (1, 4, 4, 128, 64),
    "stack-llama-gqa": (1, 4, 2, 128, 64),
    "g2048-s1024-mb1": (1, 16, 16, 1024, 128),
    "g1024-s1024-mb4": (4, 16, 16, 1024, 64),
    "g1024-s512-mb8": (8, 16, 16, 512, 64),
    "q05-s512-mb1-gqa": (1, 14, 2, 512, 64),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=1e9)
    args = p.parse_args()
    import torch
    import torch.nn.functional as F

    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "sdpa.jsonl"), "a")

    def chain(shape, dropout):
        b, a, g, s, d = shape
        q0 = torch.randn(b, a, s, d, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        k = torch.randn(b, g, s, d, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        v = torch.randn(b, g, s, d, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        fwd, bwd = [], []
        for i in range(13):
            torch.cuda.synchronize()
            start = time.perf_counter()
            y = q0
            for _ in range(CALLS):
                y = F.scaled_dot_product_attention(y, k, v, dropout_p=dropout, is_causal=True, enable_gqa=g != a)
            loss = y.float().pow(2).mean()
            mid = time.perf_counter()
            loss.backward()
            end = time.perf_counter()
            q0.grad = k.grad = v.grad = None
            if i >= 3:
                fwd.append((mid - start) / CALLS)
                bwd.append((end - mid) / CALLS)
        torch.cuda.synchronize()
        return statistics.median(fwd), statistics.median(bwd)

    for r in range(args.rounds):
        if time.time() - t0 > args.budget_s:
            break
        for name, shape in SHAPES.items():
            for dropout in (0.0, 0.1):
                f, b = chain(shape, dropout)
                log.write(json.dumps({"round": r, "shape": name, "dims": shape, "dropout": dropout,
                                      "fwd_us": f * 1e6, "bwd_us": b * 1e6}) + "\n")
                print(f"r{r} {name:18s} dropout {dropout}: fwd {f * 1e6:6.1f} us, bwd {b * 1e6:6.1f} us a call",
                      flush=True)
        log.flush()


if __name__ == "__main__":
    main()
