#!/usr/bin/env python3
"""Does an eager PyTorch launch cost the host less while the GPU is busy? (host_ladder.py in run-17: the
same block stack's host time per launch fell 10-15% as its kernels grew long enough to keep the GPU
busy.) One process, interleaved rounds, host time by perf_counter, the GPU idle before each measurement:

  - ops: CALLS in-place adds (x.add_(1.0)) on a bf16 tensor of each size, from 4 KiB (a ~2 us kernel:
    the GPU idles between launches) to 64 MiB (a kernel longer than a launch: the queue is never empty;
    CALLS stays well below the launch queue's ~1024 entries, so the host never blocks on it), each
    "plain" and "side" (a spin kernel on another stream for the whole loop: the GPU busy, the adds' own
    stream's queue as plain);
  - stacks: launch/pytorch_host.py's gpt SDPA stack (hidden 256), its step "plain", "side", and with
    its microbatches' inputs 32x longer in sequence ("long": the same launches, kernels long enough to
    keep the GPU busy).

    mpirun -np 1 --bind-to none python3 results/h200x1-2026-12-03d/host_busy.py --out DIR
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launch"))
SIZES = (4 << 10, 256 << 10, 4 << 20, 16 << 20, 64 << 20)
CALLS = 400


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=1e9)
    args = p.parse_args()

    import torch
    from pytorch_blocks import Point
    from pytorch_host import configs
    from pytorch_reference import init_distributed, timed

    t0 = time.time()
    rank, world = init_distributed("cuda")
    side = torch.cuda.Stream()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "busy.jsonl"), "a")

    def spin_beside(seconds):
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(seconds * 2.0e9))  # cycles at ~2 GHz: outlasts the loop

    def ops(size, mode):
        x = torch.zeros(size // 2, dtype=torch.bfloat16, device="cuda")
        for _ in range(20):
            x.add_(1.0)
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            if mode == "side":
                spin_beside(0.05)
            start = time.perf_counter()
            for _ in range(CALLS):
                x.add_(1.0)
            samples.append((time.perf_counter() - start) / CALLS)
            torch.cuda.synchronize()
        return statistics.median(samples)

    stack_cfg = configs(argparse.Namespace(steps=10, warmup=3))[1]  # gpt sdpa, hidden 256
    long_cfg = argparse.Namespace(**vars(stack_cfg))
    long_cfg.seq = stack_cfg.seq * 32

    def stack(cfg, mode):
        point = Point(cfg, rank, world)
        if mode == "side":
            step = point.step

            def stepped(mark=None):
                spin_beside(0.2)
                return step(mark)
            times, host = timed(stepped, 10, 3, "cuda")
        else:
            times, host = timed(point.step, 10, 3, "cuda")
        del point
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return statistics.median(times), host

    for r in range(args.rounds):
        if time.time() - t0 > args.budget_s:
            break
        for size in SIZES:
            for mode in ("plain", "side"):
                s = ops(size, mode)
                row = {"kind": "ops", "round": r, "bytes": size, "mode": mode, "host_us_per_call": s * 1e6}
                log.write(json.dumps(row) + "\n")
                print(f"r{r} ops {size:>9} B {mode:5s} {s * 1e6:6.2f} us per add_", flush=True)
        for name, cfg, mode in (("stack", stack_cfg, "plain"), ("stack", stack_cfg, "side"),
                                ("stack-long", long_cfg, "plain")):
            step_s, host = stack(cfg, mode)
            row = {"kind": name, "round": r, "mode": mode, "seq": cfg.seq, "step_time_s": step_s, "host_s": host}
            log.write(json.dumps(row) + "\n")
            print(f"r{r} {name:10s} {mode:5s} step {step_s * 1e3:6.2f} ms host " +
                  " ".join(f"{k} {v * 1e3:6.2f}" for k, v in host.items()), flush=True)
        log.flush()
    import torch.distributed as dist

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
