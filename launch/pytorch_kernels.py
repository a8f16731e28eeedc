#!/usr/bin/env python3
"""Times eager PyTorch's memory-bound kernels on this GPU and adds them to a calibration profile, so that
`commscale predict --kernels eager --calibration FILE` costs each kernel of an eager step (one per tensor
operation: src/workload/layer_ops.cpp lists them) at the speed PyTorch's own kernel runs, not at a copy's.

Each row is one (kind, phase) of op.hpp's memory kernel kinds at one size: the median of --reps timed
calls (CUDA events around each call, queued behind a spin kernel so that the host's dispatch is not
timed) after --warmup calls; where several kernels of a kind have one size (the two layout copies of
the QKV gradient, say), the row is their mean, so that as many ops priced at it take what those
kernels took together. Its bytes are what commscale's op for it
counts (bytes read + written per element x elements, the same factors as layer_ops.cpp), so the
predictor's interpolation in bytes lands on it. The shapes are those of a GPT block with hidden size
--hidden and --heads heads at sequence --seq, over a range of token counts (or, for the s x s
attention kernels, of batch x heads): the kernels' sizes, not any step that is then predicted.

    python3 launch/pytorch_kernels.py --base cal.json -o cal-eager.json

writes cal.json with every earlier eager row replaced by the ones measured here, and without the base's
clock curve (`calibrate --measure clock`: commscale's GEMMs run faster where memory-bound kernels take
part of the step, under the power limit; eager PyTorch's GPU-bound steps ran theirs at their rows' rate,
results/h200x1-2026-12-03c). What each kind times:

  norm fwd/bwd        F.layer_norm; its backward (input gradient, then weight and bias gradients) as a pair
  activation fwd/bwd  F.gelu(approximate="tanh") and its backward, over [tokens, 4 hidden]
  dropout fwd/bwd     native_dropout and its backward (masked scale), over [tokens, hidden] and [b a, s, s]
  softmax fwd/bwd     torch.softmax and _softmax_backward_data over the last dim of [b a, s, s]
  mask fwd/bwd        masked_fill_ of an [s, s] causal mask broadcast over [b a, s, s]
  copy fwd/bwd        clone of [b a, s, s] (masked_fill out of place copies first)
  permute fwd         unfused attention's context, bmm's [b a, s, d] back to [s, b, h] (a transposing
                      copy; SDPA's output is in its query's order already, a view)
  permute bwd         the QKV gradient: cat of the query, key and value gradients along the head
                      dimension, then its copy back to [s, b, 3 h], in unfused attention's and SDPA's
                      layouts (four kernels of one size, one row)
  add fwd/bwd         a + b (residuals, gradient accumulation), 1-D, 4 Mi to 256 Mi elements
  bias_grad bwd       sum over the tokens of [tokens, n] (n = hidden, 3 hidden, 4 hidden)

With `--arch llama` the block is Llama's (RMSNorm, SwiGLU, grouped-query attention, no biases, no
dropout; launch/pytorch_blocks.py), and the rows that differ are:

  norm fwd/bwd        F.rms_norm, and its backward (input and weight gradients, all its kernels)
  activation fwd/bwd  SwiGLU whole, as the block runs it: F.silu(gate) * up where gate and up are the
                      halves of fc1's [tokens, 2 F] output (strided views: PyTorch's elementwise
                      kernels do not vectorise them, and run 1.5-2x slower than on whole tensors:
                      results/h200x1-2026-12-03b, run-9), and its autograd backward (two muls,
                      silu_backward, the cat of the halves' gradients); bytes as commscale's one
                      mlp.act op counts them
and there are no dropout or bias_grad rows (Llama has neither). The permute rows take the QKV of
--kv-heads key and value heads. Write it to a profile of its own (`-o cal-eager-llama.json`): eager rows
of one kind, kernel set and phase are one curve, and LayerNorm's and RMSNorm's must not be mixed.

Either way there are `optimizer` rows: torch.optim.AdamW(fused=True).step() over 1 to 64 bf16 weights
of --hidden x --hidden (moments bf16 too, as the reference trains), at the 14 bytes per parameter
commscale's AdamW op counts; an eager step's optimizer op takes them (other optimizers take them by
bytes too: PyTorch has no other optimizer in the reference).

With --gemms every bf16 GEMM row of --base is timed once more with PyTorch and replaced: F.linear
(x [m, k] by a weight [n, k]) for a row of batch 1, torch.bmm for the batched attention products,
randn operands rotated through 512 MiB, calls back to back after --gemm-heat-ms of an 8192^3 GEMM
(calibrate's method). PyTorch's GEMMs ran a median 11% slower than calibrate's rows at the shapes
above 100 GFLOP on the H200 (0.95-1.26x; results/h200x1-2026-12-03b, run-11), and an eager profile is
PyTorch's kernels, its GEMMs included.

Either way the profile's `attention` rows are replaced by F.scaled_dot_product_attention(is_causal=True)
forward, and backward (torch.autograd.grad of its output: the whole backward), bf16, at head sizes 64
and 128, sequences 512 to 8192 and batch x heads 8, 32 and 128 (--attention-* options), timed as the
memory rows are; for GPT blocks once more with dropout_p=0.1 (rows marked "dropout": true: GPT trains
with attention dropout, and SDPA runs another kernel for it), which a Llama pass keeps. `--dry-run` checks --base and prints the cases without timing them.
"""

import argparse
import datetime
import json
import statistics
import sys

from calibration_profile import read_profile

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # --help and --dry-run need no torch
    torch = F = None

W = 2  # bytes per bf16 element
SPACER_CYCLES = 2_000_000  # ~1 ms at H200 clocks: longer than any call takes to queue


def fail(message):
    """Bad input or no GPU: the message on stderr, exit code 2 (as commscale's own)."""
    print(f"pytorch_kernels.py: {message}", file=sys.stderr)
    sys.exit(2)

def timed(fn, reps, warmup):
    """Median GPU time of one call. The GPU is kept busy (torch.cuda._sleep) while the call is queued,
    so the time is the kernels' alone, as in a step where the host runs ahead of the GPU, not the
    host's dispatch latency (~20-30 us a call, which a bare event pair around a small kernel measures)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SPACER_CYCLES)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def randn(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def cases(args):
    """Yields (kind, phases, kernel, elements, read per element, written per element, setup) where setup()
    returns the call to time (inputs allocated once, outside the timing)."""
    yield from (llama_token_cases(args) if args.arch == "llama" else gpt_token_cases(args))
    yield from attention_layout_cases(args)
    yield from score_cases(args)
    yield from optimizer_cases(args)
    for log2 in range(22, 29, 1):
        def add(n=1 << log2):
            x, y = randn(n), randn(n)
            return lambda: x + y

        yield "add", ["fwd", "bwd"], "a + b", 1 << log2, 2 * W, W, add


def gpt_token_cases(args):
    h = args.hidden
    for tokens in args.tokens:
        def norm_fwd(t=tokens):
            x, weight, bias = randn(t, h), randn(h), randn(h)
            return lambda: F.layer_norm(x, (h,), weight, bias)

        def norm_bwd(t=tokens):
            x, weight, bias, dy = randn(t, h), randn(h), randn(h), randn(t, h)
            mean = torch.zeros(t, 1, device="cuda", dtype=torch.float32)
            rstd = torch.ones(t, 1, device="cuda", dtype=torch.float32)
            return lambda: torch.ops.aten.native_layer_norm_backward(dy, x, (h,), mean, rstd, weight, bias,
                                                                     [True, True, True])

        # Input gradient (reads x and dy, writes dx) and weight/bias gradients (read x and dy).
        yield "norm", ["fwd"], "F.layer_norm", tokens * h, W, W, norm_fwd
        yield "norm", ["bwd"], "native_layer_norm_backward", tokens * h, 4 * W, W, norm_bwd

        def gelu_fwd(t=tokens):
            x = randn(t, 4 * h)
            return lambda: F.gelu(x, approximate="tanh")

        def gelu_bwd(t=tokens):
            x, dy = randn(t, 4 * h), randn(t, 4 * h)
            return lambda: torch.ops.aten.gelu_backward(dy, x, approximate="tanh")

        yield "activation", ["fwd"], "F.gelu", tokens * 4 * h, W, W, gelu_fwd
        yield "activation", ["bwd"], "gelu_backward", tokens * 4 * h, 2 * W, W, gelu_bwd
        yield from dropout_cases(tokens * h, (tokens, h))

        for n in (h, 3 * h, 4 * h):
            def bias_grad(t=tokens, n=n):
                dy = randn(t, n)
                return lambda: dy.sum(0)

            yield "bias_grad", ["bwd"], "sum(0)", tokens * n, W, 0, bias_grad


def llama_token_cases(args):
    """RMSNorm and SwiGLU's kernels over [tokens, hidden] and [tokens, F]."""
    h, f = args.hidden, args.ffn
    for tokens in args.tokens:
        def norm_fwd(t=tokens):
            x, weight = randn(t, h), randn(h)
            return lambda: F.rms_norm(x, (h,), weight, 1e-5)

        def norm_bwd(t=tokens):
            x = randn(t, h).requires_grad_(True)
            weight = randn(h).requires_grad_(True)
            y, dy = F.rms_norm(x, (h,), weight, 1e-5), randn(t, h)
            return lambda: torch.autograd.grad(y, (x, weight), dy, retain_graph=True)

        # As LayerNorm's rows count them: forward reads x, writes y; backward reads x and dy (twice:
        # input and weight gradients) and writes dx.
        yield "norm", ["fwd"], "F.rms_norm", tokens * h, W, W, norm_fwd
        yield "norm", ["bwd"], "rms_norm backward (autograd: input and weight gradients)", tokens * h, 4 * W, W, norm_bwd

        # SwiGLU as the block runs it (launch/pytorch_blocks.py): gate and up are the two halves of fc1's
        # [tokens, 2F] output (chunk: strided views, which PyTorch's elementwise kernels walk without
        # vectorising), and autograd's backward of chunk concatenates their gradients. One row per phase
        # for the whole of it, at the bytes commscale's one mlp.act op counts (layer_ops.cpp).
        def swiglu_input(t, grad):
            return torch.randn(t, 2 * f, device="cuda", dtype=torch.bfloat16, requires_grad=grad)

        def swiglu_fwd(t=tokens):
            gate, up = swiglu_input(t, False).chunk(2, dim=-1)
            return lambda: F.silu(gate) * up

        def swiglu_bwd(t=tokens):
            x = swiglu_input(t, True)
            gate, up = x.chunk(2, dim=-1)
            y, dy = F.silu(gate) * up, randn(t, f)
            return lambda: torch.autograd.grad(y, x, dy, retain_graph=True)

        yield "activation", ["fwd"], "F.silu(gate) * up on fc1's halves (2 kernels)", tokens * f, 2 * W, W, swiglu_fwd
        yield ("activation", ["bwd"], "its backward: 2 muls, silu_backward, cat of the halves' gradients (4 kernels)",
               tokens * f, 3 * W, 2 * W, swiglu_bwd)


def optimizer_cases(args):
    """torch.optim.AdamW(fused=True).step() over bf16 weights of the block's shapes, its moments bf16 too
    (the reference's optimizer: launch/pytorch_blocks.py), at the bytes commscale's AdamW op counts per
    parameter (layer_ops.cpp: weight, gradient and two moments read, weight and moments written)."""
    h = args.hidden
    for count in (1, 4, 16, 64):
        def adamw(n=count):
            weights = [torch.nn.Parameter(randn(h, h)) for _ in range(n)]
            for w in weights:
                w.grad = randn(h, h)
            optimizer = torch.optim.AdamW(weights, lr=1e-5, fused=True)
            optimizer.step()  # the moments are allocated at the first step
            return optimizer.step

        yield "optimizer", ["fwd"], f"AdamW(fused=True).step, {count} weights of {h} x {h}", count * h * h, 4 * W, 3 * W, adamw


def attention_layout_cases(args):
    h, a = args.hidden, args.heads
    d = h // a
    s = args.seq
    for batch in args.batches:
        tokens = batch * s

        def context_fwd(b=batch):
            # Unfused attention's context: bmm's [b a, s, d] output to [s, b, h] (transpose, reshape: a copy).
            # SDPA's output is already in its query's [s, b, a, d] order: a view there, no kernel.
            out = randn(b * a, s, d)
            return lambda: out.transpose(0, 1).reshape(s, b, h)

        # The QKV gradient, backward of qkv.view(s, b, a, 3d) -> (heads first) -> split: the cat of the
        # query, key and value gradients along the head dimension, then the copy back to [s, b, 3h]. The
        # gradients' layouts are the ones the step produces: for unfused attention bmm's outputs, the
        # key's transposed (it is the gradient of k^T); for SDPA the query's [s, b, a, d] order.
        def grads(b, flash):
            if flash:
                return [randn(s, b, a, d).permute(1, 2, 0, 3) for _ in range(3)]
            return [randn(b * a, s, d), randn(b * a, d, s).transpose(1, 2), randn(b * a, s, d)]

        def qkv_cat(b=batch, flash=False):
            parts = grads(b, flash)
            return lambda: torch.cat(parts, dim=-1)

        def qkv_copy(b=batch, flash=False):
            grad = torch.cat(grads(b, flash), dim=-1)  # [b a, s, 3d] or [b, a, s, 3d]
            back = grad.permute(2, 0, 1, 3) if flash else grad.transpose(0, 1)
            return lambda: back.reshape(s, b, 3 * h)

        yield "permute", ["fwd"], "bmm output transpose + reshape", tokens * h, W, W, context_fwd
        for flash in (False, True):
            tag = "SDPA" if flash else "unfused"
            yield ("permute", ["bwd"], f"cat(dq, dk, dv), {tag}", tokens * 3 * h, W, W,
                   lambda b=batch, f=flash: qkv_cat(b, f))
            yield ("permute", ["bwd"], f"QKV gradient reshape, {tag}", tokens * 3 * h, W, W,
                   lambda b=batch, f=flash: qkv_copy(b, f))



def score_cases(args):
    s = args.seq
    for heads_batch in args.heads_batches:
        scores = heads_batch * s * s

        def softmax_fwd(n=heads_batch):
            causal = torch.ones(s, s, dtype=torch.bool, device="cuda").triu(1)
            x = randn(n, s, s).masked_fill_(causal, float("-inf"))  # the masked scores, as in the step
            return lambda: torch.softmax(x, dim=-1)

        def softmax_bwd(n=heads_batch):
            y, dy = randn(n, s, s), randn(n, s, s)
            return lambda: torch.ops.aten._softmax_backward_data(dy, y, -1, torch.bfloat16)

        def mask(n=heads_batch):
            x = randn(n, s, s)
            causal = torch.ones(s, s, dtype=torch.bool, device="cuda").triu(1)
            return lambda: x.masked_fill_(causal, float("-inf"))

        def copy(n=heads_batch):
            x = randn(n, s, s)
            return lambda: x.clone()

        yield "softmax", ["fwd"], "torch.softmax", scores, W, W, softmax_fwd
        yield "softmax", ["bwd"], "_softmax_backward_data", scores, 2 * W, W, softmax_bwd
        yield "mask", ["fwd", "bwd"], "masked_fill_", scores, W, W, mask
        yield "copy", ["fwd", "bwd"], "clone", scores, W, W, copy
        if args.arch == "gpt":
            yield from dropout_cases(scores, (heads_batch, s, s))


def attention_cases(args):
    """Yields (seq, batch, head_dim, phase, dropout, setup): SDPA, causal, bf16, q, k and v of [1, batch, seq, d];
    for GPT blocks also with dropout 0.1 on the probabilities, as they train (SDPA then runs another kernel)."""
    dropouts = (0.0, 0.1) if args.arch == "gpt" else (0.0,)
    for p in dropouts:
        for d in args.attention_head_dims:
            for seq in args.attention_seqs:
                for batch in args.attention_batches:
                    def fwd(s=seq, b=batch, d=d, p=p):
                        q, k, v = randn(1, b, s, d), randn(1, b, s, d), randn(1, b, s, d)
                        return lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)

                    def bwd(s=seq, b=batch, d=d, p=p):
                        q, k, v = (randn(1, b, s, d).requires_grad_(True) for _ in range(3))
                        out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
                        dout = randn(1, b, s, d)
                        return lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)

                    yield seq, batch, d, "fwd", p, fwd
                    yield seq, batch, d, "bwd", p, bwd


def dropout_cases(elements, shape):
    def fwd():
        x = randn(*shape)
        return lambda: torch.ops.aten.native_dropout(x, 0.1, True)

    def bwd():
        dy = randn(*shape)
        keep = torch.rand(*shape, device="cuda") > 0.1
        return lambda: torch.ops.aten.native_dropout_backward(dy, keep, 1 / 0.9)

    yield "dropout", ["fwd"], "native_dropout", elements, W, W + 1, fwd
    yield "dropout", ["bwd"], "native_dropout_backward", elements, W + 1, W, bwd


def timed_back_to_back(fn, reps, warmup):
    """Median GPU time of one of `reps` calls issued back to back (an event between each two, as
    calibrate times its GEMM rows), all queued behind one spin kernel: the GPU runs them as a step runs
    its GEMMs, with no idle gap between them that would let the clocks rise."""
    for _ in range(warmup):
        fn()
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    torch.cuda._sleep(2 * SPACER_CYCLES)
    marks[0].record()
    for i in range(reps):
        fn()
        marks[i + 1].record()
    marks[-1].synchronize()
    return statistics.median(a.elapsed_time(b) * 1e-3 for a, b in zip(marks, marks[1:]))


def int_list(text, name):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        fail(f"--{name.replace('_', '-')} takes positive integers, comma-separated, not {text!r}")
    return values


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="calibration profile to add to (commscale calibrate -o FILE)")
    parser.add_argument("-o", "--output", required=True, help="profile to write (may be --base)")
    parser.add_argument("--arch", choices=("gpt", "llama"), default="gpt", help="whose block's kernels")
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--ffn", type=int, default=14336, help="llama: SwiGLU's inner size F")
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--tokens", default="1024,2048,4096,8192,16384,32768",
                        help="token counts of the [tokens, hidden] kernels")
    parser.add_argument("--batches", default="1,2,4,8,16", help="batch sizes of the permutes (tokens = batch x seq)")
    parser.add_argument("--heads-batches", default="8,16,32,64,128,256",
                        help="batch x heads of the [b a, s, s] attention kernels")
    parser.add_argument("--attention-seqs", default="512,1024,2048,4096,8192", help="SDPA rows: sequence lengths")
    parser.add_argument("--attention-batches", default="8,32,128", help="SDPA rows: batch x heads")
    parser.add_argument("--attention-head-dims", default="64,128", help="SDPA rows: head sizes")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--gemms", action="store_true",
                        help="also time every bf16 GEMM row of --base with PyTorch and replace it (randn operands)")
    parser.add_argument("--gemm-heat-ms", type=float, default=20.0, help="--gemms: heat before each shape (ms)")
    parser.add_argument("--dry-run", action="store_true", help="check --base and list the cases; time nothing")
    args = parser.parse_args()
    for name in ("tokens", "batches", "heads_batches", "attention_seqs", "attention_batches", "attention_head_dims"):
        setattr(args, name, int_list(getattr(args, name), name))
    if args.hidden % args.heads:
        fail(f"--hidden {args.hidden} is not a multiple of --heads {args.heads}")
    if args.reps < 1 or args.warmup < 0 or args.ffn < 1:
        fail("--reps and --ffn must be at least 1, --warmup 0 or more")
    return args


def measure_memory_rows(args):
    measured = {}  # (kind, phase, bytes) -> ([kernel], [seconds]): kernels of one size are one row, their mean
    for kind, phases, kernel, elements, read, written, setup in cases(args):
        seconds = timed(setup(), args.reps, args.warmup)
        torch.cuda.empty_cache()
        nbytes = round(elements * read) + round(elements * written)
        print(f"{kind:>10} {'/'.join(phases):>7} {nbytes / 2**20:>10.1f} MiB {seconds * 1e6:>10.1f} us "
              f"{nbytes / seconds / 1e9:>8.0f} GB/s  {kernel}", flush=True)
        for phase in phases:
            kernels, times = measured.setdefault((kind, phase, nbytes), ([], []))
            kernels.append(kernel)
            times.append(seconds)
    rows = []
    for (kind, phase, nbytes), (kernels, times) in sorted(measured.items()):
        names = "; ".join(dict.fromkeys(kernels))  # each kernel once, in the order timed
        rows.append({"bytes": nbytes, "seconds": statistics.fmean(times), "kernel": f"torch {names}",
                     "kind": kind, "kernels": "eager", "phase": phase})
    return rows


def gemm_operands(row):
    """Operand sets of a GEMM row (randn, as a step's activations and weights are), enough of them that
    the calls rotate through 512 MiB or more and find none in L2 (as calibrate's rows do)."""
    m, n, k, b = row["m"], row["n"], row["k"], row.get("batch", 1)
    set_bytes = W * b * (m * k + k * n + m * n)
    sets = max(1, min(64, -(-(512 << 20) // set_bytes)))
    if b == 1:  # F.linear's layout: x [m, k] times the weight [n, k], transposed
        return [(randn(m, k), randn(n, k)) for _ in range(sets)], lambda x, w: F.linear(x, w)
    return [(randn(b, m, k), randn(b, k, n)) for _ in range(sets)], torch.bmm


def measure_gemm_rows(args, profile):
    """Every bf16 GEMM row of the base profile timed once more as PyTorch runs it (F.linear, or bmm for the
    batched attention products), after --gemm-heat-ms of an 8192^3 GEMM (calibrate's sustained load)."""
    heat_a, heat_b = randn(8192, 8192), randn(8192, 8192)
    heat_ms = timed_back_to_back(lambda: heat_a @ heat_b, 3, 1) * 1e3
    rows = []
    for row in profile.get("gemm", []):
        if row.get("dtype") != "bf16":
            continue
        sets, call = gemm_operands(row)
        for _ in range(int(args.gemm_heat_ms / heat_ms)):
            heat_a @ heat_b
        turn = iter(range(1 << 30))

        def next_call():
            x, w = sets[next(turn) % len(sets)]
            return call(x, w)

        seconds = timed_back_to_back(next_call, args.reps, args.warmup)
        del sets
        torch.cuda.empty_cache()
        flops = 2.0 * row["m"] * row["n"] * row["k"] * row.get("batch", 1)
        print(f"      gemm {row['m']:>6} x {row['n']:>6} x {row['k']:>6} x {row.get('batch', 1):>3} {seconds * 1e6:>10.1f} us "
              f"{flops / seconds / 1e12:>7.1f} TFLOP/s (calibrate's row {row['seconds'] * 1e6:.1f} us)", flush=True)
        rows.append({k: row[k] for k in ("m", "n", "k", "batch", "dtype") if k in row} | {"seconds": seconds})
    return rows


def measure_attention_rows(args):
    rows = []
    for seq, batch, d, phase, dropout, setup in attention_cases(args):
        seconds = timed(setup(), args.reps, args.warmup)
        torch.cuda.empty_cache()
        keys = seq if seq < 128 else (seq + 128) // 2  # the causal share the step program counts (layer_ops.hpp)
        flops = 2.0 * seq * keys * d * batch * (5 if phase == "bwd" else 2)
        print(f" attention {phase:>7} seq {seq:>5} batch {batch:>4} head {d:>3} dropout {dropout:.1f} "
              f"{seconds * 1e6:>10.1f} us {flops / seconds / 1e12:>7.1f} TFLOP/s (as the step counts them)", flush=True)
        row = {"seq": seq, "batch": batch, "head_dim": d, "dtype": "bf16", "phase": phase, "seconds": seconds,
               "kernel": f"torch F.scaled_dot_product_attention(is_causal=True{', dropout_p=0.1' if dropout else ''})" +
                         (", torch.autograd.grad of its output" if phase == "bwd" else "")}
        if dropout:
            row["dropout"] = True
        rows.append(row)
    return rows


def main():
    args = parse_args()
    profile = read_profile(args.base, "pytorch_kernels.py")
    if args.dry_run:
        memory = sum(len(c[1]) for c in cases(args))
        attention = sum(1 for _ in attention_cases(args))
        print(f"pytorch_kernels.py --dry-run: {args.arch} block, {memory} memory rows (before merging sizes), "
              f"{attention} attention rows would be timed into {args.output}; --base {args.base} is a profile "
              f"of {profile.get('machine', {}).get('gpu', '?')}; nothing was timed")
        return
    if torch is None or not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch (the rows time PyTorch's GPU kernels)")

    memory = measure_memory_rows(args)
    attention = measure_attention_rows(args)
    if args.gemms:
        gemms = measure_gemm_rows(args, profile)
        profile["gemm"] = [r for r in profile.get("gemm", []) if r.get("dtype") != "bf16"] + gemms
    profile["memory"] = [r for r in profile.get("memory", []) if r.get("kernels") != "eager"] + memory
    # A Llama pass (no dropout) keeps the dropout rows a GPT pass wrote into its base.
    kept = [r for r in profile.get("attention", []) if r.get("dropout")] if args.arch != "gpt" else []
    profile["attention"] = kept + attention
    # The base's clock curve (calibrate --measure clock) is left out: eager PyTorch's GPU-bound steps ran
    # their GEMMs at their rows' rate, not at the curve's speedup (results/h200x1-2026-12-03c, section 5).
    dropped_clock = profile.pop("clock", None) is not None
    machine = profile.setdefault("machine", {})
    what = "eager kernels, attention and bf16 GEMMs" if args.gemms else "eager kernels and attention"
    note = (f"{what} ({args.arch} block): launch/pytorch_kernels.py, torch {torch.__version__}, "
            f"{torch.cuda.get_device_name()}, {datetime.date.today().isoformat()}")
    machine["description"] = "; ".join(x for x in (machine.get("description", ""), note) if x)
    with open(args.output, "w") as f:
        json.dump(profile, f, indent=1)
    gemm_note = f", {len(gemms)} bf16 GEMM rows timed with PyTorch" if args.gemms else ""
    print(f"# {len(memory)} eager rows and {len(attention)} attention rows{gemm_note} written to {args.output}" +
          ("; the base's clock curve left out (eager PyTorch's steps run their GEMMs at their rows' rate)"
           if dropped_clock else ""))


if __name__ == "__main__":
    main()
