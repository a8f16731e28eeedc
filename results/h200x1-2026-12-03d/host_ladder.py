#!/usr/bin/env python3
"""Eager PyTorch's host time at the host-bound points against launch/pytorch_host.py's stacks, in one
process, interleaved: is the stacks' host time per launch the runs' (then the misses of
results/h200x1-2026-12-03c section 6 are the machine moving between measurements), or does it move
with the shapes (then the stacks at hidden 256 cannot stand for the runs)?

Every round (--rounds), in one order, each built afresh and timed by launch/pytorch_reference.py's own
timed() (a synchronised start, perf_counter as each phase's host work ends, CUDA events around the
step; median over --steps after --warmup):
  - the five stacks of pytorch_host.py (gpt and llama, unfused and SDPA at hidden 256, and the SDPA
    chain), written per round as a pytorch_host.py --details file (host_s = host_s_free = these times),
    so that `pytorch_host.py --fit-only` makes the round's host rows;
  - a ladder of GPT SDPA stacks (4 layers, 2 microbatches) from hidden 256 seq 128 micro-batch 1 to the
    runs' shapes, one dimension at a time;
  - the host-bound runs of --grid (pytorch_reference.py's grid lines), written per round as
    pytorch_reference.py lines (pytorch-ID.txt), for launch/predict_accuracy.py.
(--no-ladder: the stacks and the runs only.) In the first round only, every stack and run is also profiled once (pytorch_host.py's
launches_per_phase: kernels per phase and class, the GPU's busy time), and the CPU core and its clock
are read before and after each round.

    mpirun -np 1 --bind-to none python3 results/h200x1-2026-12-03d/host_ladder.py --grid grid.jsonl --out DIR
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "launch"))

LADDER = [  # hidden, heads, seq, micro-batch
    (256, 4, 128, 1), (1024, 16, 128, 1), (2048, 16, 128, 1), (256, 4, 1024, 1), (256, 4, 512, 8),
    (1024, 16, 512, 1), (1024, 16, 512, 8), (2048, 16, 1024, 1)]


def cpu_state():
    """The core this process runs on and the clocks /proc/cpuinfo reports (MHz), for reading noise."""
    with open("/proc/self/stat") as f:
        core = int(f.read().rsplit(")", 1)[1].split()[36])
    mhz = []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                mhz.append(float(line.split(":")[1]))
    return {"core": core, "core_mhz": mhz[core] if core < len(mhz) else None,
            "median_mhz": statistics.median(mhz) if mhz else None, "load": os.getloadavg()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=1e9, help="start no round after this many seconds")
    p.add_argument("--no-ladder", action="store_true", help="the stacks and the runs only")
    args = p.parse_args()

    import torch
    from pytorch_blocks import Point
    from pytorch_host import CHAIN, AttentionChain, collective_host_s, configs, launches_per_phase
    from pytorch_reference import check_point, init_distributed, read_points, settings, timed

    t0 = time.time()
    rank, world = init_distributed("cuda")
    grid = read_points(argparse.Namespace(grid=args.grid, **{k: None for k in (
        "arch", "mode", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "micro_batch", "microbatches",
        "dropout", "attention", "compile", "optimizer", "steps", "warmup", "profile")}))
    for i, cfg in enumerate(grid):
        for key, default in (("mode", "dp"), ("arch", "gpt"), ("microbatches", 1), ("compile", False),
                             ("optimizer", "adamw"), ("steps", args.steps), ("warmup", args.warmup)):
            if getattr(cfg, key) is None:
                setattr(cfg, key, default)
        cfg.steps, cfg.warmup = args.steps, args.warmup
        error = check_point(cfg, f"{args.grid}:{i + 1}")
        if error:
            sys.exit(f"host_ladder.py: {error}")
    stacks = configs(argparse.Namespace(steps=args.steps, warmup=args.warmup))
    ladder = []
    for hidden, heads, seq, mb in LADDER:
        cfg = argparse.Namespace(**vars(stacks[1]))  # gpt sdpa
        cfg.hidden, cfg.heads, cfg.kv_heads, cfg.seq, cfg.micro_batch, cfg.ffn = hidden, heads, heads, seq, mb, None
        cfg.id = f"ladder-g{hidden}-s{seq}-mb{mb}"
        ladder.append(cfg)
    collective = collective_host_s()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "ladder.jsonl"), "a")

    def record(kind, name, cfg_or_none, r, make, profile):
        point = make()
        times, host = timed(point.step, args.steps, args.warmup, "cuda")
        row = {"kind": kind, "id": name, "round": r, "step_time_s": statistics.median(times),
               "step_times_s": times, "host_s": host}
        if cfg_or_none is not None:
            row["settings"] = settings(cfg_or_none, world)
        if profile:
            counts, busy_us = launches_per_phase(point)
            row["launches"], row["gpu_busy_us_profiled_step"] = counts, busy_us
        log.write(json.dumps(row) + "\n")
        log.flush()
        print(f"r{r} {kind:6s} {name:34s} step {row['step_time_s'] * 1e3:7.2f} ms, host " +
              " ".join(f"{k} {v * 1e3:6.2f}" for k, v in host.items()), flush=True)
        del point
        torch.cuda.empty_cache()
        return row

    counts = {}  # launches per phase and class of each stack, profiled in the first round
    for r in range(args.rounds):
        if time.time() - t0 > args.budget_s:
            print(f"# round {r}: budget spent, stopping", flush=True)
            break
        log.write(json.dumps({"kind": "cpu", "round": r, "when": "before", **cpu_state()}) + "\n")
        details = []
        for cfg in stacks:
            row = record("stack", f"{cfg.arch}-{cfg.attention}", None, r, lambda cfg=cfg: Point(cfg, rank, world),
                         r == 0)
            counts.setdefault(row["id"], row.get("launches"))
            phases = {k: row["host_s"][k] for k in ("fwd", "bwd", "step")}
            phases["other"] = row["host_s"]["issue"] - sum(phases.values())
            details.append({"arch": cfg.arch, "attention": cfg.attention, "host_s": phases, "host_s_free": phases,
                            "launches": counts[row["id"]]})
        row = record("stack", CHAIN, None, r, lambda: AttentionChain(stacks[0].microbatches), r == 0)
        counts.setdefault(CHAIN, row.get("launches"))
        phases = {k: row["host_s"][k] for k in ("fwd", "bwd", "step")}
        phases["other"] = row["host_s"]["issue"] - sum(phases.values())
        details.append({"arch": CHAIN, "attention": "sdpa", "host_s": phases, "host_s_free": phases,
                        "launches": counts[CHAIN]})
        with open(os.path.join(args.out, f"host-r{r}.json"), "w") as f:
            json.dump({"collective_host_s": collective, "steps": args.steps, "repeats": 1, "stacks": details}, f,
                      indent=1)
        for cfg in [] if args.no_ladder else ladder:
            record("ladder", cfg.id, cfg, r, lambda cfg=cfg: Point(cfg, rank, world), r == 0)
        folder = os.path.join(args.out, f"r{r}")
        os.makedirs(folder, exist_ok=True)
        for cfg in grid:
            row = record("run", cfg.id, cfg, r, lambda cfg=cfg: Point(cfg, rank, world), r == 0)
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
