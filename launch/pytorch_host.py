#!/usr/bin/env python3
"""Eager PyTorch's host time per op, by phase (fwd, bwd, step) and class (gemm, attention, kernel), measured on the
training step of launch/pytorch_reference.py itself (launch/pytorch_blocks.py: the same blocks, the
same DistributedDataParallel wrapping with no_sync on all but the last microbatch, the same fused AdamW)
at tiny shapes where the GPU is never the bottleneck, and written into a calibration profile as `host`
rows (src/predict/calibration.hpp) for `commscale predict` and `train --host-framework`.

Method, for each of four block stacks (gpt and llama, unfused and SDPA attention; hidden 256, 4 heads,
seq 128, micro-batch 1, 4 layers, 2 microbatches) and a fifth, a chain of 16 SDPA calls and nothing else
(each call's output is the next one's query, key and value; head size 64, seq 128, no dropout):
  - host time of each phase of a step, by time.perf_counter, with no synchronisation inside the step
    (the step's own code calls back as each phase's host work ends: every microbatch's forward, then
    its backward, then the optimizer and zero_grad), the median over --steps steps after --warmup,
    measured two ways, both written to --details: "free", each step issued from an idle GPU, as a
    training loop issues its steps (the rows' default, --queue free), and "spin", each step issued
    behind a spin kernel that outlasts it (checked: the spin has not ended when the step's last launch
    returns), so that no launch can wait for the GPU. At these shapes the GPU keeps up with the host, so
    the free queue stays short; behind the spin every launch joins hundreds of queued ones, and costs
    the host 5-27% more per stack (results/h200x1-2026-12-03c, run-13). A host-bound PyTorch run's own
    steps (pytorch_reference.py's host_s) issue into a short queue: the run's host time is its step
    time within 2.5%. Two microbatches, so one step's ~450 launches stay well inside the GPU's launch
    queue (~1024 entries), which would otherwise block the host;
  - the kernels each phase launches, from one more step under torch.profiler: every kernel is charged to
    the PyTorch op that launched it and to the phase that op began in; a call of
    F.scaled_dot_product_attention (forward) or of its autograd node (backward) counts once, of class
    attention, whatever kernels it launches (the predictor charges a fused attention kernel one call:
    src/program/host_costs.hpp); any other kernel is of class gemm when it is a cuBLAS GEMM (or an
    attention kernel outside such a call), of class collective when it is NCCL's, else of class kernel;
  - per phase, the host time less the collectives' (at the cost measured below) is fitted as
    gemm launches x c_gemm + attention calls x c_attention + kernel launches x c_kernel over the five
    stacks (least squares, launch/host_fit.py); when that fit is unstable or negative, attention calls
    are taken as GEMM launches (two classes), and when that fails too every class takes the phase's time
    over its launches; the source says which. The SDPA chain is there because the four block stacks
    cannot tell an attention call from a GEMM launch: each SDPA stack has exactly two batched GEMMs
    fewer per attention call than its unfused twin, so the gemm and attention counts are collinear but
    for the few elementwise kernels that differ, and the fit then charges the architectures' other
    Python work (Llama's unfused step costs 26% more host time than GPT's at the same launch counts,
    results/h200x1-2026-12-02c) to whichever class separates them;
  - the step's host time outside the phases (the loop itself) is step_us;
  - all of the above --repeats times (default 3), the stacks built afresh each time; each stack's phase
    times are the median over the repeats before the fit (one measurement of this machine's host
    moved a fit's figures by up to 40% on the H200 machine: results/h200x1-2026-12-03, run-6);
  - collective: torch.distributed.all_reduce of 8 KiB bf16 on this one rank (NCCL's one-rank path),
    calls queued behind a spin kernel, median per call. p2p: torch.distributed refuses a send to the
    process itself, so p2p is taken as the collective's cost, and the source says so.
The GPU's busy time in the profiled step is written to --details beside the host time, for reading.

A second row, framework "megatron", is derived from the same figures with sync before_optimizer
(Megatron-LM runs eager PyTorch, with fused kernels where PyTorch has several; its gradient-norm and
inf checks read a value back to the host before the optimizer). It is not measured on Megatron-LM, and
its source says so; the catalog's `megatron` row (topologies/frameworks.json) scales the eager figures by
Megatron-Core's measured factors instead (launch/megatron_host.py, results/h100x1-2026-12-06).

    mpirun -np 1 python3 launch/pytorch_host.py --base cal-eager.json -o cal-full.json --details host.json
    python3 launch/pytorch_host.py --base cal-eager.json -o cal-refit.json --fit-only host.json   # no GPU
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

from calibration_profile import read_profile
from host_fit import CLASSES, fit_phase

PHASES = ("fwd", "bwd", "step")
GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}
GEMM_KERNEL_WORDS = ("gemm", "nvjet", "cutlass", "xmma", "cublas", "sgemm", "hgemm")
ATTENTION_WORDS = ("flash", "fmha", "cudnn", "scaled_dot_product", "attention")
# An op whose name has one of these is a fused attention call: F.scaled_dot_product_attention and the ops
# under it, or its autograd node (ScaledDotProductFlashAttentionBackward0 and its siblings).
ATTENTION_CALL_WORDS = ("scaled_dot_product", "scaleddotproduct")
CHAIN_CALLS = 16  # SDPA calls per microbatch of the attention-only stack
CHAIN = "sdpa-chain"  # its "arch" in --details
SPIN_CYCLES = 40_000_000  # ~20 ms at H200 clocks: longer than the calls take to queue


def fail(message):
    """Bad input or no GPU: the message on stderr, exit code 2 (as commscale's own)."""
    print(f"pytorch_host.py: {message}", file=sys.stderr)
    sys.exit(2)

def configs(args):
    base = {"mode": "dp", "layers": 4, "hidden": 256, "heads": 4, "seq": 128, "micro_batch": 1, "microbatches": 2,
            "compile": False, "optimizer": "adamw", "id": None}
    out = []
    for arch in ("gpt", "llama"):
        for attention in ("unfused", "sdpa"):
            extra = ({"kv_heads": 4, "ffn": 1024, "dropout": 0.1} if arch == "gpt"
                     else {"kv_heads": 2, "ffn": 704, "dropout": 0.0})
            out.append(argparse.Namespace(**base, **extra, arch=arch, attention=attention,
                                          steps=args.steps, warmup=args.warmup, profile=None))
    return out


class AttentionChain:
    """The attention-only stack: per microbatch, CHAIN_CALLS calls of F.scaled_dot_product_attention in a
    chain (each output is the next call's query, key and value), a loss, its backward; the step phase
    only drops the input's gradient. The same step(mark) as pytorch_blocks.Point's."""

    def __init__(self, microbatches, heads=4, seq=128, head_dim=64):
        import torch

        torch.manual_seed(1234)
        self.inputs = [torch.randn(1, heads, seq, head_dim, dtype=torch.bfloat16, device="cuda", requires_grad=True)
                       for _ in range(microbatches)]

    def step(self, mark=None):
        import torch.nn.functional as F

        for x in self.inputs:
            y = x
            for _ in range(CHAIN_CALLS):
                y = F.scaled_dot_product_attention(y, y, y, is_causal=True)
            loss = y.float().pow(2).mean()
            if mark:
                mark("fwd")
            loss.backward()
            if mark:
                mark("bwd")
        for x in self.inputs:
            x.grad = None
        if mark:
            mark("step")


def is_attention_call(op_name):
    return any(w in op_name.lower() for w in ATTENTION_CALL_WORDS)


def inside_attention_call(event):
    """Whether a profiler event is an attention call or runs under one (its CPU parents)."""
    while event is not None:
        if is_attention_call(event.name):
            return True
        event = getattr(event, "cpu_parent", None)
    return False


def kernel_class(op_name, kernel_name):
    k, o = kernel_name.lower(), op_name.lower()
    if "nccl" in k:
        return "collective"
    if any(w in k for w in ATTENTION_WORDS) or any(w in o for w in ATTENTION_WORDS):
        return "gemm"
    if op_name in GEMM_OPS or any(w in k for w in GEMM_KERNEL_WORDS):
        return "gemm"
    return "kernel"


def phase_host_times(point, steps, warmup, queue="spin"):
    """Median host seconds per phase, and of the step outside the phases. queue "spin": each step is
    issued behind a spin kernel that outlasts it, so no launch waits for the GPU: the times are the
    host's alone (a step that outruns the spin is run again behind one twice as long), every launch
    behind hundreds of queued ones. queue "free": each step starts on an idle GPU, as a training loop's
    steps do after a synchronisation, the GPU running kernels as they come (at these shapes it keeps up
    with the host, so its queue stays short)."""
    import torch

    samples = {p: [] for p in (*PHASES, "other")}
    cycles = SPIN_CYCLES
    i = 0
    while i < warmup + steps:
        torch.cuda.synchronize()
        spent = dict.fromkeys(PHASES, 0.0)
        if queue == "spin":
            torch.cuda._sleep(cycles)
        spun = torch.cuda.Event()
        spun.record()
        last = [time.perf_counter()]

        def mark(phase):
            now = time.perf_counter()
            spent[phase] += now - last[0]
            last[0] = now

        start = last[0]
        point.step(mark)
        total = time.perf_counter() - start
        queued = queue == "free" or not spun.query()
        torch.cuda.synchronize()
        if not queued:
            if cycles >= SPIN_CYCLES * 64:
                fail(f"a step's launches still waited for the GPU behind a spin of {cycles} cycles: the step "
                     "synchronises with the GPU or fills its launch queue, and its host time cannot be taken alone")
            cycles *= 2
            continue
        if i >= warmup:
            for p in PHASES:
                samples[p].append(spent[p])
            samples["other"].append(total - sum(spent.values()))
        i += 1
    return {p: statistics.median(v) for p, v in samples.items()}


def launches_per_phase(point):
    """Kernels launched in each phase of one profiled step, by class, and the GPU's busy time."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    def mark(phase):
        with record_function(f"commscale.mark.{phase}"):
            pass

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("commscale.mark.start"):
            pass
        point.step(mark)
        torch.cuda.synchronize()
    events = prof.events()
    marks = sorted((e.time_range.start, e.name.rsplit(".", 1)[1]) for e in events
                   if e.name.startswith("commscale.mark."))
    counts = {p: {"gemm": 0, "attention": 0, "kernel": 0, "collective": 0} for p in PHASES}
    busy_us = 0.0
    on_gpu = 0  # kernels the GPU ran (copies and fills are not launches)
    charged = 0  # kernels charged to an op
    for e in events:
        if e.device_type == torch.autograd.DeviceType.CUDA and getattr(e, "is_user_annotation", False):
            continue  # a GPU-side annotation (DistributedDataParallel.forward, Optimizer.step) spans kernels
        if e.device_type == torch.autograd.DeviceType.CUDA:
            busy_us += e.time_range.elapsed_us()
            on_gpu += not e.name.lower().startswith(("memcpy", "memset"))
            continue
        if e.name.startswith("commscale.mark."):
            continue
        phase = None  # the phase whose window the op began in: after the mark before it
        for at, name in marks:
            if at > e.time_range.start:
                phase = name
                break
        kernels = [k for k in getattr(e, "kernels", None) or [] if not k.name.lower().startswith(("memcpy", "memset"))]
        charged += len(kernels)
        if phase not in counts:
            continue  # before the step's start mark or after its end
        if inside_attention_call(e):  # one call, counted at its outermost op; its kernels are the call's
            counts[phase]["attention"] += is_attention_call(e.name) and not inside_attention_call(getattr(e, "cpu_parent", None))
            continue
        for k in kernels:
            counts[phase][kernel_class(e.name, k.name)] += 1
    if charged > 1.05 * on_gpu + 2:
        fail(f"torch.profiler charged {charged} kernels to ops but the GPU ran {on_gpu}: kernels counted twice "
             "(this torch links a kernel to more than one event); no figures are written")
    return counts, busy_us


def collective_host_s(reps=9, calls=100):
    """Host seconds per torch.distributed.all_reduce call on this rank, queued behind a spin kernel."""
    import torch
    import torch.distributed as dist

    x = torch.zeros(4096, dtype=torch.bfloat16, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    samples = []
    cycles = SPIN_CYCLES
    while len(samples) < reps:
        torch.cuda._sleep(cycles)
        spun = torch.cuda.Event()
        spun.record()
        start = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(x)
        seconds = time.perf_counter() - start
        queued = not spun.query()
        torch.cuda.synchronize()
        if not queued:
            cycles *= 2
            continue
        samples.append(seconds / calls)
    return statistics.median(samples)


def host_rows(fits, step_s, collective_s, note):
    issue = {}
    for phase in PHASES:
        for cls in CLASSES:
            issue[f"{phase}.{cls}"] = round(fits[phase][cls] * 1e6, 3)
    issue["collective"] = round(collective_s * 1e6, 3)
    issue["p2p"] = round(collective_s * 1e6, 3)
    eager = {"framework": "pytorch-eager", "source": note, "issue_us": issue, "step_us": round(step_s * 1e6, 3),
             "sync": "none"}
    megatron = {"framework": "megatron",
                "source": ("derived, not measured on Megatron-LM: the pytorch-eager row's per-launch host costs "
                           "(Megatron-LM runs eager PyTorch, with fused kernels where PyTorch has several) with "
                           "sync before_optimizer (its gradient-norm and inf checks read a value back before the "
                           "optimizer); pytorch-eager's source: " + note),
                "issue_us": dict(issue), "step_us": round(step_s * 1e6, 3), "sync": "before_optimizer"}
    return [eager, megatron]


def measure(args):
    """The stacks' host times and launch counts, --repeats times: each stack's phase times are the median
    over the repeats (its launch counts are the first repeat's: one step's kernels do not change)."""
    import torch.distributed as dist

    runs, collective_s = [], []
    for r in range(args.repeats):
        print(f"# repeat {r + 1} of {args.repeats}", flush=True)
        details, collective = measure_once(args)
        runs.append(details)
        collective_s.append(collective)
    dist.destroy_process_group()
    return merge_repeats(runs), statistics.median(collective_s)


def merge_repeats(runs):
    """Stack by stack, the median of each phase's host time over the repeats (each repeat: measure_once's
    details, the stacks in one order); the repeats' own times are kept beside it."""
    merged = []
    for stacks in zip(*runs, strict=True):
        d = dict(stacks[0])
        d["host_s"] = {p: statistics.median(s["host_s"][p] for s in stacks) for p in stacks[0]["host_s"]}
        d["host_us_step"] = sum(d["host_s"].values()) * 1e6
        d["host_s_repeats"] = [s["host_s"] for s in stacks]
        if all("host_s_free" in s for s in stacks):
            d["host_s_free"] = {p: statistics.median(s["host_s_free"][p] for s in stacks) for p in stacks[0]["host_s_free"]}
            d["host_s_free_repeats"] = [s["host_s_free"] for s in stacks]
        merged.append(d)
    return merged


def measure_once(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import torch.distributed as dist
    from pytorch_blocks import Point
    from pytorch_reference import init_distributed

    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch (it times PyTorch's launches of GPU kernels)")
    rank, world = init_distributed("cuda") if not dist.is_initialized() else (dist.get_rank(), dist.get_world_size())
    if world != 1:
        fail("run it on one rank (mpirun -np 1): the figures are one process's host")
    collective_s = collective_host_s()
    stacks = [(cfg.arch, cfg.attention, lambda cfg=cfg: Point(cfg, rank, world, "cuda")) for cfg in configs(args)]
    stacks.append((CHAIN, "sdpa", lambda: AttentionChain(configs(args)[0].microbatches)))
    details = []
    for arch, attention, make in stacks:
        point = make()
        times = phase_host_times(point, args.steps, args.warmup, "spin")
        free = phase_host_times(point, args.steps, args.warmup, "free")
        counts, busy_us = launches_per_phase(point)
        host_us = sum(times.values()) * 1e6
        details.append({"arch": arch, "attention": attention, "host_s": times, "host_s_free": free, "launches": counts,
                        "gpu_busy_us_profiled_step": busy_us, "host_us_step": host_us})
        print(f"{arch:>10} {attention:>7} free: " + ", ".join(f"{p} {free[p] * 1e3:.2f} ms" for p in (*PHASES, "other")),
              flush=True)
        print(f"{arch:>10} {attention:>7}: " + ", ".join(
            f"{p} {times[p] * 1e3:.2f} ms / {counts[p]['gemm']} gemm + {counts[p]['attention']} attention + "
            f"{counts[p]['kernel']} kernel + {counts[p]['collective']} nccl" for p in PHASES) +
            f", other {times['other'] * 1e3:.2f} ms; GPU busy {busy_us / 1e3:.2f} ms (profiled step)", flush=True)
        del point
        torch.cuda.empty_cache()
    return details, collective_s


def fit_details(details, collective_s, queue="spin"):
    """Per phase, the fit over the stacks (host_fit.py) of their host times under `queue` (spin:
    "host_s", free: "host_s_free"); the step's host time outside its phases (the block stacks' median:
    the chain has no optimizer nor DDP)."""
    key = "host_s" if queue == "spin" else "host_s_free"
    if any(key not in d for d in details):
        fail(f"--queue {queue}: the details have no {key} for every stack (measured before pytorch_host.py "
             "timed the free queue)")
    fits = {}
    for phase in PHASES:
        fit = fit_phase([(d[key][phase], d["launches"][phase]) for d in details], collective_s)
        if fit is None:
            fail(f"no kernel launch seen in phase {phase}: the profiler saw no kernels")
        fits[phase] = fit
    step_s = statistics.median(d[key]["other"] for d in details if d["arch"] != CHAIN)
    return fits, step_s


def read_details(path):
    """A --details file of an earlier run: its collective cost and stacks, or exit 2 naming what is wrong."""
    try:
        with open(path) as f:
            doc = json.load(f)
        stacks = doc["stacks"]
        for d in stacks:
            for phase in PHASES:
                float(d["host_s"][phase])
                {c: int(d["launches"][phase].get(c, 0)) for c in (*CLASSES, "collective")}
            float(d["host_s"]["other"])
        return float(doc["collective_host_s"]), stacks, doc.get("steps", "?"), doc.get("repeats", 1)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"--fit-only {path}: {e}")
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        fail(f"--fit-only {path}: not a --details file of pytorch_host.py ({type(e).__name__}: {e}); expected "
             "{\"collective_host_s\": s, \"stacks\": [{\"arch\", \"host_s\": {fwd, bwd, step, other}, \"launches\": "
             "{fwd: {gemm, attention, kernel, collective}, ...}}]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="calibration profile to add to")
    parser.add_argument("-o", "--output", required=True, help="profile to write (may be --base)")
    parser.add_argument("--details", help="also write the per-stack phase times and launch counts (JSON)")
    parser.add_argument("--fit-only", metavar="DETAILS",
                        help="measure nothing: fit the host rows again from an earlier run's --details file")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="measurements of every stack; the fit takes "
                        "each stack's median phase times")
    parser.add_argument("--queue", choices=("spin", "free"), default="free",
                        help="which of the two measurements the rows are fitted to: spin (every step queued "
                        "behind a spin kernel) or free (every step from an idle GPU); both are measured and "
                        "written to --details")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.repeats < 1:
        fail("--steps and --repeats must be at least 1, --warmup 0 or more")
    profile = read_profile(args.base, "pytorch_host.py")
    if args.fit_only:
        collective_s, details, steps, repeats = read_details(args.fit_only)
        measured = f"launch/pytorch_host.py --fit-only {args.fit_only} (refitted, {datetime.date.today().isoformat()})"
    else:
        details, collective_s = measure(args)
        steps, repeats = args.steps, args.repeats
        import torch

        measured = (f"launch/pytorch_host.py, torch {torch.__version__}, {torch.cuda.get_device_name()}, "
                    f"{datetime.date.today().isoformat()}")
    fits, step_s = fit_details(details, collective_s, args.queue)
    chain = f" and a chain of {CHAIN_CALLS} SDPA calls alone" if any(d["arch"] == CHAIN for d in details) else ""
    note = (f"{measured}: host time per phase by perf_counter (median of {steps} "
            f"steps; of {repeats} such measurements, each stack's median) over its kernel launches and attention calls (torch.profiler), gpt and llama blocks with "
            f"unfused and SDPA attention at hidden 256, seq 128, micro-batch 1, 4 layers, 2 microbatches, DDP on "
            f"one rank, fused AdamW{chain}, " +
            ("each step issued behind a spin kernel that outlasted it (no launch waited for the GPU); "
             if args.queue == "spin" else "each step issued from an idle GPU (--queue free); ") +
            "; ".join(f"{p}: {fits[p]['fit']}" for p in PHASES) + "; "
            f"collective: torch.distributed.all_reduce 8 KiB on one rank (NCCL's one-rank path); p2p: taken as "
            f"the collective's (torch.distributed has no send to the process itself); step_us: the step's host "
            f"time outside its phases")
    rows = host_rows(fits, step_s, collective_s, note)
    kept = [r for r in profile.get("host", []) if r.get("framework") not in {r2["framework"] for r2 in rows}]
    profile["host"] = kept + rows
    with open(args.output, "w") as f:
        json.dump(profile, f, indent=1)
    if args.details and not args.fit_only:
        with open(args.details, "w") as f:
            json.dump({"collective_host_s": collective_s, "steps": steps, "repeats": repeats, "fits": fits,
                       "stacks": details}, f, indent=1)
    for r in rows:
        print(f"# {r['framework']}: " + ", ".join(f"{k} {v:.1f} us" for k, v in r["issue_us"].items()) +
              f", step {r['step_us']:.1f} us, sync {r['sync']}")
    print(f"# host rows written to {args.output}")


if __name__ == "__main__":
    main()
