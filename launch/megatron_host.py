#!/usr/bin/env python3
"""Megatron-Core's host time per transformer layer and microbatch, measured on Megatron's own training
step: a GPTModel built from the local layer spec (what runs without Transformer Engine or apex), wrapped
in Megatron's DistributedDataParallel, stepped by Megatron's forward_backward_func (no pipelining), at
tiny shapes where the GPU keeps up with the host (hidden 256, seq 128, micro-batch 1). The host's time
inside Megatron's forward_step and backward_step is taken with time.perf_counter around each call (the
schedule calls them by their module names, which this script wraps); the median over --steps steps of
each stack depth, fitted against the layer count, gives the host time one layer costs per microbatch
(forward, backward). launch/studies/derive_row.py turns that into the `megatron` host row.

The Megatron tree is the user's (--megatron: a checkout whose megatron/core imports with this PyTorch);
nothing here builds or installs it. Where Megatron's fused options cannot run on this PyTorch (no apex,
no compiled softmax kernels), they are turned off and the output says which.

    python3 launch/megatron_host.py --megatron /path/to/Megatron-LM --megatron-commit SHA -o host.json
"""

import argparse
import contextlib
import functools
import json
import os
import statistics
import sys
import time


def fail(message):
    print(f"megatron_host.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megatron", required=True, help="Megatron-LM checkout (its megatron/core is imported)")
    parser.add_argument("--megatron-commit", default="unknown", help="the checkout's commit, for the output")
    parser.add_argument("-o", "--out", required=True, help="JSON output")
    parser.add_argument("--layers", default="2,4,8", help="stack depths to time (comma-separated)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    try:
        args.layers = [int(x) for x in args.layers.split(",")]
    except ValueError:
        fail(f"--layers: expected comma-separated integers, got '{args.layers}'")
    if len(args.layers) < 2 or min(args.layers) < 1:
        fail("--layers: expected at least two depths, each >= 1")
    if not os.path.isdir(os.path.join(args.megatron, "megatron", "core")):
        fail(f"--megatron: no megatron/core under '{args.megatron}'")
    return args


class PhaseClock:
    """Host seconds spent inside the wrapped functions, per phase."""

    def __init__(self):
        self.seconds = {"fwd": 0.0, "bwd": 0.0}

    def wrap(self, phase, function):
        @functools.wraps(function)
        def timed(*a, **k):
            start = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                self.seconds[phase] += time.perf_counter() - start

        return timed

    def reset(self):
        self.seconds = {"fwd": 0.0, "bwd": 0.0}


# Megatron's fused options, tried in this order: all on (its training defaults), then without the fused
# softmax (a compiled extension this PyTorch may lack), then none.
FUSIONS = (
    {"masked_softmax_fusion": True, "bias_activation_fusion": True, "bias_dropout_fusion": True},
    {"masked_softmax_fusion": False, "bias_activation_fusion": True, "bias_dropout_fusion": True},
    {"masked_softmax_fusion": False, "bias_activation_fusion": False, "bias_dropout_fusion": False},
)


def build(args, layers, fused):
    import torch
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.transformer.module import Float16Module
    from megatron.core.transformer.transformer_config import TransformerConfig

    config = TransformerConfig(
        num_layers=layers, hidden_size=args.hidden, num_attention_heads=args.heads, bf16=True,
        params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16, hidden_dropout=0.1, attention_dropout=0.1,
        gradient_accumulation_fusion=False, **fused)
    model = GPTModel(config=config, transformer_layer_spec=get_gpt_layer_local_spec(), vocab_size=1024,
                     max_sequence_length=args.seq).cuda()
    model = Float16Module(config, model)  # as Megatron's get_model wraps a bf16 model
    ddp = DistributedDataParallel(
        config=config, ddp_config=DistributedDataParallelConfig(grad_reduce_in_fp32=True), module=model)
    config.no_sync_func = ddp.no_sync
    config.finalize_model_grads_func = finalize_model_grads
    return ddp


def batches(args):
    import torch

    tokens = torch.randint(0, 1024, (1, args.seq), device="cuda")
    positions = torch.arange(args.seq, device="cuda").unsqueeze(0)
    mask = torch.triu(torch.ones(1, 1, args.seq, args.seq, device="cuda", dtype=torch.bool), diagonal=1)
    while True:
        yield tokens, positions, mask


def forward_step(data_iterator, model):
    tokens, positions, mask = next(data_iterator)
    output = model(tokens, positions, mask, labels=tokens)

    def loss_func(output_tensor):
        loss = output_tensor.float().mean()
        return loss, {"lm loss": loss}

    return output, loss_func


def time_depth(args, layers, fused, clock):
    import torch
    from megatron.core.pipeline_parallel import get_forward_backward_func

    model = build(args, layers, fused)
    step = get_forward_backward_func()
    data = batches(args)
    fwd, bwd, total = [], [], []
    for i in range(args.warmup + args.steps):
        model.zero_grad_buffer()
        torch.cuda.synchronize()
        clock.reset()
        start = time.perf_counter()
        step(forward_step_func=forward_step, data_iterator=data, model=[model], num_microbatches=args.microbatches,
             seq_length=args.seq, micro_batch_size=1, forward_only=False)
        host = time.perf_counter() - start
        torch.cuda.synchronize()
        if i >= args.warmup:
            fwd.append(clock.seconds["fwd"] / args.microbatches)
            bwd.append(clock.seconds["bwd"] / args.microbatches)
            total.append(host)
    del model
    return {"layers": layers, "fwd_us_per_microbatch": 1e6 * statistics.median(fwd),
            "bwd_us_per_microbatch": 1e6 * statistics.median(bwd), "step_host_us": 1e6 * statistics.median(total),
            "fwd_us_spread": [1e6 * min(fwd), 1e6 * max(fwd)], "bwd_us_spread": [1e6 * min(bwd), 1e6 * max(bwd)]}


def slope(points, key):
    """Least-squares slope of points[key] against the layer count: the host time one layer adds."""
    xs = [p["layers"] for p in points]
    ys = [p[key] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def main():
    args = parse_args()
    sys.path.insert(0, os.path.abspath(args.megatron))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    import torch

    if not torch.cuda.is_available():
        fail("no CUDA device: Megatron's step needs one")
    torch.cuda.set_device(0)
    torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    from megatron.core import parallel_state
    from megatron.core.pipeline_parallel import schedules
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed

    parallel_state.initialize_model_parallel(1, 1)
    model_parallel_cuda_manual_seed(1234)
    clock = PhaseClock()
    schedules.forward_step = clock.wrap("fwd", schedules.forward_step)
    schedules.backward_step = clock.wrap("bwd", schedules.backward_step)

    fused, why = None, []
    for option in FUSIONS:
        try:
            time_depth(argparse.Namespace(**{**vars(args), "steps": 1, "warmup": 0}), min(args.layers), option, clock)
            fused = option
            break
        except Exception as error:  # fused paths need apex or compiled kernels this PyTorch may lack
            why.append(f"{option}: {type(error).__name__}: {error}"[:300])
    if fused is None:
        fail("Megatron's step failed with every fusion setting: " + "; ".join(why))
    why = "; ".join(why)
    points = [time_depth(args, n, fused, clock) for n in args.layers]
    fwd_slope, fwd_base = slope(points, "fwd_us_per_microbatch")
    bwd_slope, bwd_base = slope(points, "bwd_us_per_microbatch")
    cpu = "unknown"
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as info:
        cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    result = {
        "kind": "commscale-megatron-host",
        "megatron_commit": args.megatron_commit,
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "cpu": cpu,
        "shape": {"hidden": args.hidden, "heads": args.heads, "seq": args.seq, "micro_batch": 1,
                  "microbatches": args.microbatches, "dtype": "bf16", "layer_spec": "local"},
        "fused": fused, "fused_off_because": why,
        "steps": args.steps, "warmup": args.warmup,
        "points": points,
        "per_layer_us": {"fwd": fwd_slope, "bwd": bwd_slope},
        "outside_layers_us": {"fwd": fwd_base, "bwd": bwd_base},
    }
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)
    print(f"megatron host per layer and microbatch: fwd {fwd_slope:.1f} us, bwd {bwd_slope:.1f} us "
          f"(outside the layers: fwd {fwd_base:.1f}, bwd {bwd_base:.1f}; fused {fused}) {why}")
    for p in points:
        print(f"  layers {p['layers']:3d}: fwd {p['fwd_us_per_microbatch']:9.1f} us  bwd {p['bwd_us_per_microbatch']:9.1f} us"
              f"  step host {p['step_host_us']:9.1f} us")
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
