#!/usr/bin/env python3
"""Eager PyTorch's host time per microbatch and per layer, measured apart on launch/pytorch_host.py's
stacks (issue 21; results/h200x1-2026-12-03d section 6 left this as the next measurement).

The stacks of pytorch_host.py are all 4 layers x 2 microbatches, so a host cost paid once per
microbatch (the DDP wrapper's forward, the loss, the autograd engine's start) is folded into their
per-launch figures. Here each of the four block stacks (gpt and llama, unfused and SDPA attention, at
pytorch_host.py's shape: hidden 256, seq 128, micro-batch 1) runs at several layer counts and
microbatch counts (STACK_SHAPES), with a GPT SDPA stack without dropout beside it, then the host-bound
runs of --grid, all in one process, in interleaved rounds (as results/h200x1-2026-12-03d/host_ladder.py,
whose records these follow: ladder.jsonl, one row per stack or run per round, with pytorch_reference's
timed(): the host's time per phase by perf_counter, the step by CUDA events). In the first round every
stack and run is also profiled once (pytorch_host.py's launches_per_phase: kernels per phase and class).

    mpirun -np 1 --bind-to none python3 results/h200x1-2026-12-03e/host_layers.py --grid grid.jsonl --out DIR
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launch"))
sys.path.insert(0, os.path.join(HERE, "..", "h200x1-2026-12-03d"))

STACK_SHAPES = [(1, 2), (2, 2), (4, 2), (8, 2), (4, 1), (4, 4)]  # layers, microbatches
NODROP_SHAPES = [(1, 2), (4, 2), (8, 2)]  # the GPT SDPA stack with dropout 0


def stack_configs(base):
    """(id, cfg) for every stack: pytorch_host.py's four at every STACK_SHAPES entry, GPT SDPA without
    dropout at NODROP_SHAPES."""
    out = []
    for cfg in base:
        for layers, mbs in STACK_SHAPES:
            c = argparse.Namespace(**vars(cfg))
            c.layers, c.microbatches = layers, mbs
            c.id = f"{cfg.arch}-{cfg.attention}-l{layers}-m{mbs}"
            out.append((c.id, c))
        if cfg.arch == "gpt" and cfg.attention == "sdpa":
            for layers, mbs in NODROP_SHAPES:
                c = argparse.Namespace(**vars(cfg))
                c.layers, c.microbatches, c.dropout = layers, mbs, 0.0
                c.id = f"gpt-sdpa-nodrop-l{layers}-m{mbs}"
                out.append((c.id, c))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=1e9, help="start no round after this many seconds")
    args = p.parse_args()

    import torch
    from host_ladder import cpu_state
    from pytorch_blocks import Point
    from pytorch_host import collective_host_s, configs, launches_per_phase
    from pytorch_reference import check_point, init_distributed, read_points, settings, timed

    t0 = time.time()
    rank, world = init_distributed("cuda")
    grid = read_points(argparse.Namespace(grid=args.grid, **{k: None for k in (
        "arch", "mode", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "micro_batch", "microbatches",
        "dropout", "attention", "compile", "optimizer", "steps", "warmup", "profile")}))
    for i, cfg in enumerate(grid):
        for key, default in (("mode", "dp"), ("arch", "gpt"), ("microbatches", 1), ("compile", False),
                             ("optimizer", "adamw")):
            if getattr(cfg, key) is None:
                setattr(cfg, key, default)
        cfg.steps, cfg.warmup = args.steps, args.warmup
        error = check_point(cfg, f"{args.grid}:{i + 1}")
        if error:
            sys.exit(f"host_layers.py: {error}")
    stacks = stack_configs(configs(argparse.Namespace(steps=args.steps, warmup=args.warmup)))
    os.makedirs(args.out, exist_ok=True)
    collective = collective_host_s()
    log = open(os.path.join(args.out, "ladder.jsonl"), "a")
    log.write(json.dumps({"kind": "collective", "collective_host_s": collective}) + "\n")

    def record(kind, name, cfg, r, profile):
        point = Point(cfg, rank, world)
        times, host = timed(point.step, args.steps, args.warmup, "cuda")
        row = {"kind": kind, "id": name, "round": r, "step_time_s": statistics.median(times),
               "step_times_s": times, "host_s": host, "settings": settings(cfg, world)}
        if profile:
            row["launches"], row["gpu_busy_us_profiled_step"] = launches_per_phase(point)
        log.write(json.dumps(row) + "\n")
        log.flush()
        print(f"r{r} {kind:6s} {name:34s} step {row['step_time_s'] * 1e3:7.2f} ms, host " +
              " ".join(f"{k} {v * 1e3:6.2f}" for k, v in host.items()), flush=True)
        del point
        torch.cuda.empty_cache()
        return row

    for r in range(args.rounds):
        if time.time() - t0 > args.budget_s:
            print(f"# round {r}: budget spent, stopping", flush=True)
            break
        log.write(json.dumps({"kind": "cpu", "round": r, "when": "before", **cpu_state()}) + "\n")
        for name, cfg in stacks:
            record("stack", name, cfg, r, r == 0)
        folder = os.path.join(args.out, f"r{r}")
        os.makedirs(folder, exist_ok=True)
        for cfg in grid:
            row = record("run", cfg.id, cfg, r, r == 0)
            line = {**settings(cfg, world), "torch": torch.__version__, "device": "cuda", "dtype": "bfloat16",
                    "step_time_s": row["step_time_s"], "steps": args.steps,
                    "host_s": {k: round(v, 7) for k, v in row["host_s"].items()}}
            with open(os.path.join(folder, f"pytorch-{cfg.id}.txt"), "w") as f:
                f.write(json.dumps(line) + "\n")
        log.write(json.dumps({"kind": "cpu", "round": r, "when": "after", **cpu_state()}) + "\n")
        log.flush()
    import torch.distributed as dist

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
