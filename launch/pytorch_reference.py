#!/usr/bin/env python3
"""The PyTorch reference for `commscale train`: the same GPT block stack, run with PyTorch on the same
GPUs, to check that commscale's executor is at least as fast and that its predictor lands near a real
framework's step time.

One process per GPU, started by mpirun (or torchrun); NCCL through torch.distributed. The model is the
stack of GPT blocks commscale builds with `--vocab 0` (pre-norm LayerNorm, QKV, causal attention as
batched matmuls with softmax and dropout, projection, GELU MLP, dropout and residuals), bf16
parameters and activations, AdamW (fused). Parallelism, one at a time as the issue's comparison asks:

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

Prints one JSON line: median step time over --steps after --warmup, per rank 0. `--profile FILE` then
runs one more step under torch.profiler and writes rank 0's GPU kernel times by kernel (JSON): where an
eager framework's step spends the time that commscale's fused step does not.

usage: mpirun -np 2 python3 launch/pytorch_reference.py --mode tp --layers 8 --hidden 4096 --heads 32 \
           --seq 2048 --micro-batch 2 --microbatches 4
"""

import argparse
import contextlib
import json
import math
import os
import statistics

import torch
import torch.distributed as dist
import torch.nn.functional as F


def init_distributed():
    for ours, theirs in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                         ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")):
        if ours not in os.environ and theirs in os.environ:
            os.environ[ours] = os.environ[theirs]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    return dist.get_rank(), dist.get_world_size()


class CopyToTensorParallel(torch.autograd.Function):
    """Identity forward; all-reduce of the gradient backward (Megatron's f)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad)
        return grad


class ReduceFromTensorParallel(torch.autograd.Function):
    """All-reduce forward; identity backward (Megatron's g)."""

    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, tp, dropout, attention):
        super().__init__()
        self.tp = tp
        self.attention = attention
        self.heads = heads // tp
        self.head_dim = hidden // heads
        self.dropout = dropout
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden // tp)
        self.proj = torch.nn.Linear(hidden // tp, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden // tp)
        self.fc2 = torch.nn.Linear(4 * hidden // tp, hidden)

    def enter(self, x):
        return CopyToTensorParallel.apply(x) if self.tp > 1 else x

    def leave(self, x):
        return ReduceFromTensorParallel.apply(x) if self.tp > 1 else x

    def forward(self, x):  # x: [seq, batch, hidden]
        s, b, _ = x.shape
        qkv = self.qkv(self.enter(self.ln1(x))).view(s, b, self.heads, 3 * self.head_dim)
        if self.attention == "sdpa":  # fused (flash) attention: commscale train --flash-attn
            # [batch, heads, seq, head_dim] views: the layout the flash kernel takes (a 3-D one sends
            # SDPA to its fp32 math fallback).
            q, k, v = qkv.permute(1, 2, 0, 3).split(self.head_dim, dim=-1)
            context = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)
            context = context.permute(2, 0, 1, 3)
        else:
            qkv = qkv.view(s, b * self.heads, 3 * self.head_dim).transpose(0, 1)
            q, k, v = qkv.split(self.head_dim, dim=-1)
            scores = torch.baddbmm(torch.empty(b * self.heads, s, s, dtype=x.dtype, device=x.device), q,
                                   k.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(self.head_dim))
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            probs = F.dropout(torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1), self.dropout, True)
            context = torch.bmm(probs, v).transpose(0, 1)
        context = context.reshape(s, b, self.heads * self.head_dim)
        x = x + F.dropout(self.leave(self.proj(context)), self.dropout, True)
        h = F.gelu(self.fc1(self.enter(self.ln2(x))), approximate="tanh")
        return x + F.dropout(self.leave(self.fc2(h)), self.dropout, True)


def timed(step, steps, warmup):
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        dist.barrier()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) * 1e-3)
    return times


def kernel_profile(step, path):
    """One step under torch.profiler: GPU time per kernel name, the GPU busy sum and the step's span."""
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("dp", "tp", "pp"), required=True)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--micro-batch", type=int, default=1)
    parser.add_argument("--microbatches", type=int, default=1, help="per step (per replica with dp)")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--attention", choices=("unfused", "sdpa"), default="unfused",
                        help="unfused: batched matmuls, mask, softmax, dropout; sdpa: F.scaled_dot_product_attention")
    parser.add_argument("--compile", action="store_true", help="torch.compile the blocks (fuses the elementwise ops)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--profile", metavar="FILE", help="after timing, profile one step: GPU time per kernel (JSON)")
    args = parser.parse_args()

    rank, world = init_distributed()
    tp = world if args.mode == "tp" else 1
    stages = world if args.mode == "pp" else 1
    stage = rank if args.mode == "pp" else 0
    layers = args.layers // stages
    torch.manual_seed(1234 + (rank if args.mode != "tp" else 0))
    model = torch.nn.Sequential(*[Block(args.hidden, args.heads, tp, args.dropout, args.attention)
                                  for _ in range(layers)])
    model = model.to(device="cuda", dtype=torch.bfloat16)
    if args.compile:
        for block in model:
            block.compile()
    if args.mode == "dp":
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    shape = (args.seq, args.micro_batch, args.hidden)
    inputs = [torch.randn(shape, dtype=torch.bfloat16, device="cuda") for _ in range(args.microbatches)]

    def step_local():
        for i, x in enumerate(inputs):
            last = i == len(inputs) - 1
            with model.no_sync() if args.mode == "dp" and not last else contextlib.nullcontext():
                model(x).float().pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def step_pipeline():
        outputs, received = [], []
        for x in inputs:  # GPipe: all forwards ...
            if stage > 0:
                x = torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                dist.recv(x, stage - 1)
                x.requires_grad_(True)
            received.append(x)
            y = model(x)
            if stage < stages - 1:
                dist.send(y.detach().contiguous(), stage + 1)
            outputs.append(y)
        for x, y in zip(reversed(received), reversed(outputs)):  # ... then all backwards
            if stage == stages - 1:
                y.float().pow(2).mean().backward()
            else:
                grad = torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                dist.recv(grad, stage + 1)
                y.backward(grad)
            if stage > 0:
                dist.send(x.grad.contiguous(), stage - 1)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step = step_pipeline if args.mode == "pp" else step_local
    times = timed(step, args.steps, args.warmup)
    worst = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(json.dumps({"tool": "pytorch", "torch": torch.__version__, "mode": args.mode, "world": world,
                          "layers": args.layers, "hidden": args.hidden, "heads": args.heads, "seq": args.seq,
                          "micro_batch": args.micro_batch, "microbatches": args.microbatches,
                          "attention": args.attention, "compile": args.compile,
                          "step_time_s": worst.item(), "steps": args.steps}))
    if args.profile:
        kernel_profile(step, args.profile if rank == 0 else os.devnull)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
