"""The PyTorch block stacks of launch/pytorch_reference.py, and its training step, shared with
launch/pytorch_host.py (which times the host side of the very same step).

Two architectures, as commscale builds them with `--vocab 0` (src/workload/layer_ops.cpp):

  gpt    pre-norm LayerNorm, QKV with biases, causal attention, projection, GELU MLP (4 h), dropout
         after attention's softmax and after each branch, residuals (GPT-3's block; the reference's
         original, unchanged)
  llama  pre-norm RMSNorm, QKV without biases with grouped-query attention (--kv-heads), projection,
         SwiGLU MLP: gate and up in one linear of 2 F (as commscale's fc1 is), silu(gate) * up, a linear
         of F back; no biases, no dropout (Llama has none). Rotary position embeddings are left out:
         commscale's step has no kernel for them (a Llama-style model's positions cost nothing there),
         so the reference leaves them out too.

Parallelism, one at a time: dp (DistributedDataParallel, 25 MiB buckets, no_sync on all but the last
microbatch), tp (Megatron-style column/row parallel linears with their all-reduces), pp (GPipe).
"""

import contextlib
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F


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


def rms_norm(hidden):
    """torch.nn.RMSNorm (PyTorch 2.4 and later): one weight, no bias."""
    return torch.nn.RMSNorm(hidden, eps=1e-5)


class LlamaBlock(torch.nn.Module):
    """Llama's block as commscale builds it: QKV of (heads + 2 kv_heads) x head_dim, attention with each
    group of heads / kv_heads query heads sharing a key and value head, SwiGLU with gate and up in one
    linear. Unfused attention repeats each key and value head for its query heads (expand, then a copy:
    bmm needs one batch of keys per query head); SDPA takes the groups as they are (enable_gqa)."""

    def __init__(self, hidden, heads, kv_heads, ffn, tp, attention):
        super().__init__()
        self.tp = tp
        self.attention = attention
        self.heads = heads // tp
        self.kv_heads = kv_heads // tp
        self.head_dim = hidden // heads
        self.ffn = ffn // tp
        self.norm1 = rms_norm(hidden)
        self.qkv = torch.nn.Linear(hidden, (self.heads + 2 * self.kv_heads) * self.head_dim, bias=False)
        self.proj = torch.nn.Linear(self.heads * self.head_dim, hidden, bias=False)
        self.norm2 = rms_norm(hidden)
        self.fc1 = torch.nn.Linear(hidden, 2 * self.ffn, bias=False)
        self.fc2 = torch.nn.Linear(self.ffn, hidden, bias=False)

    def enter(self, x):
        return CopyToTensorParallel.apply(x) if self.tp > 1 else x

    def leave(self, x):
        return ReduceFromTensorParallel.apply(x) if self.tp > 1 else x

    def attend(self, qkv, s, b):
        a, g, d = self.heads, self.kv_heads, self.head_dim
        if self.attention == "sdpa":
            q, k, v = qkv.view(s, b, a + 2 * g, d).permute(1, 2, 0, 3).split([a, g, g], dim=1)
            context = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=g != a)
            return context.permute(2, 0, 1, 3).reshape(s, b, a * d)
        q, k, v = qkv.split([a * d, g * d, g * d], dim=-1)
        q = q.reshape(s, b * a, d).transpose(0, 1)  # [b a, s, d]

        def per_query_head(t):  # [s, b, g d] -> [b a, s, d]
            t = t.reshape(s, b, g, 1, d).expand(s, b, g, a // g, d)
            return t.reshape(s, b * a, d).transpose(0, 1)

        k, v = per_query_head(k), per_query_head(v)
        scores = torch.baddbmm(torch.empty(b * a, s, s, dtype=qkv.dtype, device=qkv.device), q, k.transpose(1, 2),
                               beta=0.0, alpha=1.0 / math.sqrt(d))
        mask = torch.ones(s, s, dtype=torch.bool, device=qkv.device).triu(1)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return torch.bmm(probs, v).transpose(0, 1).reshape(s, b, a * d)

    def forward(self, x):  # x: [seq, batch, hidden]
        s, b, _ = x.shape
        x = x + self.leave(self.proj(self.attend(self.qkv(self.enter(self.norm1(x))), s, b)))
        gate, up = self.fc1(self.enter(self.norm2(x))).chunk(2, dim=-1)
        return x + self.leave(self.fc2(F.silu(gate) * up))


def make_block(cfg, tp):
    if cfg.arch == "llama":
        return LlamaBlock(cfg.hidden, cfg.heads, cfg.kv_heads, cfg.ffn, tp, cfg.attention)
    return Block(cfg.hidden, cfg.heads, tp, cfg.dropout, cfg.attention)


class Point:
    """One block stack, its optimizer, its inputs and its training step, on this rank."""

    def __init__(self, cfg, rank, world, device="cuda"):
        self.cfg = cfg
        self.tp = world if cfg.mode == "tp" else 1
        self.stages = world if cfg.mode == "pp" else 1
        self.stage = rank if cfg.mode == "pp" else 0
        layers = cfg.layers // self.stages
        torch.manual_seed(1234 + (rank if cfg.mode != "tp" else 0))
        model = torch.nn.Sequential(*[make_block(cfg, self.tp) for _ in range(layers)])
        # bf16 as commscale's steps; fp32 on the CPU, where gloo has no bf16 collectives.
        self.dtype = torch.bfloat16 if device == "cuda" else torch.float32
        model = model.to(device=device, dtype=self.dtype)
        if cfg.compile:
            for block in model:
                block.compile()
        if cfg.mode == "dp":
            model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True)
        self.model = model
        fused = {"fused": True} if device == "cuda" else {}  # the fused kernel is CUDA's
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, **fused) if cfg.optimizer == "adamw" else None
        self.device = device
        self.shape = (cfg.seq, cfg.micro_batch, cfg.hidden)
        self.inputs = [torch.randn(self.shape, dtype=self.dtype, device=device) for _ in range(cfg.microbatches)]

    def optimize(self):
        if self.optimizer is not None:
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        else:
            self.model.zero_grad(set_to_none=True)

    def step_local(self, mark=None):
        """dp and tp: each microbatch forward then backward, then the optimizer. `mark(phase)`, when
        given, is called as each phase's host work ends (pytorch_host.py)."""
        for i, x in enumerate(self.inputs):
            last = i == len(self.inputs) - 1
            with self.model.no_sync() if self.cfg.mode == "dp" and not last else contextlib.nullcontext():
                loss = self.model(x).float().pow(2).mean()
                if mark:
                    mark("fwd")
                loss.backward()
                if mark:
                    mark("bwd")
        self.optimize()
        if mark:
            mark("step")

    def step_pipeline(self, mark=None):
        outputs, received = [], []
        stage, stages, shape = self.stage, self.stages, self.shape
        for x in self.inputs:  # GPipe: all forwards ...
            if stage > 0:
                x = torch.empty(shape, dtype=self.dtype, device=self.device)
                dist.recv(x, stage - 1)
                x.requires_grad_(True)
            received.append(x)
            y = self.model(x)
            if stage < stages - 1:
                dist.send(y.detach().contiguous(), stage + 1)
            outputs.append(y)
        if mark:
            mark("fwd")
        for x, y in zip(reversed(received), reversed(outputs)):  # ... then all backwards
            if stage == stages - 1:
                y.float().pow(2).mean().backward()
            else:
                grad = torch.empty(shape, dtype=self.dtype, device=self.device)
                dist.recv(grad, stage + 1)
                y.backward(grad)
            if stage > 0:
                dist.send(x.grad.contiguous(), stage - 1)
        if mark:
            mark("bwd")
        self.optimize()
        if mark:
            mark("step")

    def step(self, mark=None):
        return self.step_pipeline(mark) if self.cfg.mode == "pp" else self.step_local(mark)
