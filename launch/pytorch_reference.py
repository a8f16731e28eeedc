#!/usr/bin/env python3
"""The PyTorch reference for `commscale train`: the same block stack, run with PyTorch on the same GPUs,
to check that commscale's executor is at least as fast and that its predictor lands near a real
framework's step time.

One process per GPU, started by mpirun (or torchrun); NCCL through torch.distributed. The model is the
stack of blocks commscale builds with `--vocab 0` (launch/pytorch_blocks.py): `--arch gpt` (default)
GPT's (pre-norm LayerNorm, QKV, causal attention as batched matmuls with softmax and dropout,
projection, GELU MLP, dropout and residuals), `--arch llama` Llama's (RMSNorm, grouped-query attention
with --kv-heads, SwiGLU MLP of --ffn, no biases, no dropout, no rotary embedding: commscale has no
kernel for it), bf16 parameters and activations, AdamW (fused; `--optimizer none` for forward and
backward only). Parallelism, one at a time as the issue's comparison asks:

  --mode dp  DistributedDataParallel, 25 MiB buckets overlapping the last microbatch's backward (the
             others run under no_sync(), as gradient accumulation with DDP does; commscale --dp N)
  --mode tp  Megatron-style tensor parallelism: column-parallel QKV and fc1, row-parallel projection
             and fc2, an all-reduce after each row-parallel GEMM in forward and before each
             column-parallel one in backward (commscale --tp N)
  --mode pp  two or more stages, GPipe schedule: every microbatch forward, then every one backward,
             activations and gradients by send/recv (commscale --pp N --schedule gpipe)

Attention is unfused by default (batched matmuls, mask, softmax, dropout: what commscale runs without
--flash-attn); `--attention sdpa` uses F.scaled_dot_product_attention (flash attention: commscale's
--flash-attn), and `--compile` runs the blocks through torch.compile, which fuses the elementwise ops as
Megatron's hand-written fused kernels do (the bytes commscale's memory-bound kernels move).

Prints one JSON line: median step time over --steps after --warmup, per rank 0, and rank 0's host time
per phase ("host_s": fwd, bwd, step as the phases' host work ends, issue the whole step() call; medians). `--profile FILE` then
runs one more step under torch.profiler and writes rank 0's GPU kernel times by kernel (JSON): where an
eager framework's step spends the time that commscale's fused step does not.

`--grid FILE` runs many points in one process (one import, one process group): FILE has one JSON object
per line whose keys are this script's options with underscores ("hidden", "micro_batch", "kv_heads",
"attention", "profile", ...) plus an optional "id" echoed in the output; what a line leaves out comes
from the command line. One JSON line per point; a point that fails (out of memory, say) prints a line
with "error" and the grid goes on. `--dry-run` prints the points' settings without running (no torch
needed).

usage: mpirun -np 2 python3 launch/pytorch_reference.py --mode tp --layers 8 --hidden 4096 --heads 32 \
           --seq 2048 --micro-batch 2 --microbatches 4
       mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid points.jsonl
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

# The options a grid line may set, with their types (the command line's names, underscores for dashes).
POINT_KEYS = {"arch": str, "mode": str, "layers": int, "hidden": int, "heads": int, "kv_heads": int, "ffn": int,
              "seq": int, "micro_batch": int, "microbatches": int, "dropout": float, "attention": str,
              "compile": bool, "optimizer": str, "steps": int, "warmup": int, "profile": str, "id": str}
CHOICES = {"arch": ("gpt", "llama"), "mode": ("dp", "tp", "pp"), "attention": ("unfused", "sdpa"),
           "optimizer": ("adamw", "none")}


def fail(message):
    """Bad input or no GPU: the message on stderr, exit code 2 (as commscale's own)."""
    print(f"pytorch_reference.py: {message}", file=sys.stderr)
    sys.exit(2)

def init_distributed(device):
    import torch
    import torch.distributed as dist

    for ours, theirs in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                         ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")):
        if ours not in os.environ and theirs in os.environ:
            os.environ[ours] = os.environ[theirs]
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    if device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if device == "cuda" else "gloo")
    return dist.get_rank(), dist.get_world_size()


HOST_PHASES = ("fwd", "bwd", "step")


def timed(step, steps, warmup, device):
    """Step times: CUDA events around each step (the GPU's span), or the host clock on the CPU; and the
    host's own time per phase of each step (time.perf_counter as each phase's host work ends, through
    the step's mark callback: nothing waits for the GPU to take them), "issue" the host's whole time in
    step(). The same clock and marks as launch/pytorch_host.py's host stacks, so that a prediction's
    host time can be held against the run's own."""
    import torch
    import torch.distributed as dist

    times = []
    host = {p: [] for p in (*HOST_PHASES, "issue")}
    for i in range(warmup + steps):
        if device == "cuda":
            torch.cuda.synchronize()
        dist.barrier()
        spent = dict.fromkeys(HOST_PHASES, 0.0)
        last = [0.0]

        def mark(phase):
            now = time.perf_counter()
            spent[phase] += now - last[0]
            last[0] = now

        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            begin = last[0] = time.perf_counter()
            step(mark)
            issued = time.perf_counter() - begin
            end.record()
            torch.cuda.synchronize()
            seconds = start.elapsed_time(end) * 1e-3
        else:
            begin = last[0] = time.perf_counter()
            step(mark)
            seconds = issued = time.perf_counter() - begin
        if i >= warmup:
            times.append(seconds)
            for p in HOST_PHASES:
                host[p].append(spent[p])
            host["issue"].append(issued)
    return times, {p: statistics.median(v) for p, v in host.items()}


def kernel_profile(step, path):
    """One step under torch.profiler: GPU time per kernel name, the GPU busy sum and the step's span."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = {}
    first, last = math.inf, 0.0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA or getattr(event, "is_user_annotation", False):
            continue  # annotations (DistributedDataParallel.forward, Optimizer.step) span kernels
        entry = kernels.setdefault(event.name, {"calls": 0, "gpu_us": 0.0})
        entry["calls"] += 1
        entry["gpu_us"] += event.time_range.elapsed_us()
        first, last = min(first, event.time_range.start), max(last, event.time_range.end)
    rows = sorted(({"kernel": k, **v} for k, v in kernels.items()), key=lambda r: -r["gpu_us"])
    with open(path, "w") as f:
        json.dump({"gpu_busy_us": sum(r["gpu_us"] for r in rows), "gpu_span_us": last - first,
                   "kernel_launches": sum(r["calls"] for r in rows), "kernels": rows}, f, indent=1)


def parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=CHOICES["mode"], default=None, help="required unless every grid line sets it")
    p.add_argument("--arch", choices=CHOICES["arch"], default="gpt")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=None, help="llama: key/value heads (default: --heads)")
    p.add_argument("--ffn", type=int, default=None, help="llama: the MLP's inner size F (required with llama)")
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--microbatches", type=int, default=1, help="per step (per replica with dp)")
    p.add_argument("--dropout", type=float, default=None, help="default 0.1 for gpt; llama has none (0)")
    p.add_argument("--attention", choices=CHOICES["attention"], default="unfused",
                   help="unfused: batched matmuls, mask, softmax, dropout; sdpa: F.scaled_dot_product_attention")
    p.add_argument("--compile", action="store_true", help="torch.compile the blocks (fuses the elementwise ops)")
    p.add_argument("--optimizer", choices=CHOICES["optimizer"], default="adamw",
                   help="adamw: fused AdamW; none: forward and backward only (gradients set to None)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--profile", metavar="FILE", help="after timing, profile one step: GPU time per kernel (JSON)")
    p.add_argument("--grid", metavar="FILE", help="points to run in this process, one JSON object per line")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: gloo and the host clock, for checking a script without a GPU (not a reference)")
    p.add_argument("--dry-run", action="store_true", help="print the points' settings, run nothing")
    return p


def check_point(cfg, where):
    """Completes and checks one point's settings; returns an error message or None."""
    if cfg.mode is None:
        return f"{where}: no mode (--mode or a \"mode\" key)"
    for key, choices in CHOICES.items():
        if getattr(cfg, key) not in choices:
            return f"{where}: {key} \"{getattr(cfg, key)}\" is not one of {', '.join(choices)}"
    if cfg.kv_heads is None:
        cfg.kv_heads = cfg.heads
    if cfg.dropout is None:
        cfg.dropout = 0.1 if cfg.arch == "gpt" else 0.0
    for key in ("layers", "hidden", "heads", "kv_heads", "seq", "micro_batch", "microbatches", "steps"):
        if getattr(cfg, key) < 1:
            return f"{where}: {key} must be at least 1"
    if cfg.hidden % cfg.heads or cfg.heads % cfg.kv_heads:
        return f"{where}: hidden {cfg.hidden}, heads {cfg.heads} and kv_heads {cfg.kv_heads} do not divide"
    if cfg.arch == "llama":
        if not cfg.ffn:
            return f"{where}: llama needs ffn (the SwiGLU MLP's inner size)"
        if cfg.dropout:
            return f"{where}: llama has no dropout (commscale's Llama block has none to match)"
    elif cfg.kv_heads != cfg.heads or cfg.ffn not in (None, 4 * cfg.hidden):
        return f"{where}: gpt has kv_heads = heads and ffn = 4 hidden"
    return None


def read_points(args):
    """The points to run: the command line's, or one per line of --grid over the command line's defaults."""
    if not args.grid:
        return [argparse.Namespace(**{k: getattr(args, k) for k in POINT_KEYS if k != "id"}, id=None)]
    points = []
    try:
        with open(args.grid) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"--grid {args.grid}: {e}")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{args.grid}:{number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{where}: {e}")
        if not isinstance(entry, dict):
            fail(f"{where}: not a JSON object")
        cfg = argparse.Namespace(**{k: getattr(args, k) for k in POINT_KEYS if k != "id"}, id=None)
        for key, value in entry.items():
            kind = POINT_KEYS.get(key)
            if kind is None:
                fail(f"{where}: unknown key \"{key}\" (known: {', '.join(POINT_KEYS)})")
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                fail(f"{where}: \"{key}\" is {json.dumps(value)}, expected {kind.__name__}")
            setattr(cfg, key, value)
        points.append(cfg)
    if not points:
        fail(f"--grid {args.grid} has no points")
    return points


def settings(cfg, world):
    return {"tool": "pytorch", "id": cfg.id, "mode": cfg.mode, "world": world, "arch": cfg.arch, "layers": cfg.layers,
            "hidden": cfg.hidden, "heads": cfg.heads, "kv_heads": cfg.kv_heads, "ffn": cfg.ffn, "seq": cfg.seq,
            "micro_batch": cfg.micro_batch, "microbatches": cfg.microbatches, "dropout": cfg.dropout,
            "attention": cfg.attention, "compile": cfg.compile, "optimizer": cfg.optimizer}


def run_point(cfg, rank, world, device):
    """Builds, times and (optionally) profiles one point; rank 0 prints its line."""
    import torch
    import torch.distributed as dist
    from pytorch_blocks import Point

    point = Point(cfg, rank, world, device)
    times, host = timed(point.step, cfg.steps, cfg.warmup, device)
    worst = torch.tensor([statistics.median(times)], device=device)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    if rank == 0:
        line = {**settings(cfg, world), "torch": torch.__version__, "device": device,
                "dtype": str(point.dtype).replace("torch.", ""), "step_time_s": worst.item(), "steps": cfg.steps,
                "host_s": {p: round(v, 7) for p, v in host.items()}}
        if cfg.id is None:
            del line["id"]
        print(json.dumps(line), flush=True)
    if cfg.profile:
        kernel_profile(point.step, cfg.profile if rank == 0 else os.devnull)


def main():
    args = parser().parse_args()
    points = read_points(args)
    for i, cfg in enumerate(points):
        error = check_point(cfg, f"{args.grid}:{i + 1}" if args.grid else "pytorch_reference.py")
        if error:
            fail(f"{error}")
    if args.dry_run:
        for cfg in points:
            print(json.dumps({"dry_run": True, **settings(cfg, None)}))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import torch.distributed as dist

    if args.device == "cuda" and not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch (--device cpu runs the script on the CPU)")
    rank, world = init_distributed(args.device)
    for cfg in points:
        try:
            run_point(cfg, rank, world, args.device)
        except torch.cuda.OutOfMemoryError as e:  # the grid goes on: the next point may fit
            if rank == 0:
                print(json.dumps({**settings(cfg, world), "error": f"out of memory: {str(e).splitlines()[0]}"}),
                      flush=True)
            if not args.grid:
                raise
        if args.device == "cuda":
            torch.cuda.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
