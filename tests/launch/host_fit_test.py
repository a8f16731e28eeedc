#!/usr/bin/env python3
"""launch/host_fit.py (pytorch_host.py's fit) on synthetic stacks made from known per-class costs: the
three-class fit recovers them, the fallbacks take over where the counts cannot tell the classes apart,
and pytorch_host.py --fit-only writes the attention key from a details file (and refuses a bad one).
Pure Python: no torch, no GPU."""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "launch"))

import host_fit  # noqa: E402

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


# The launch counts of run-3's forward phase (results/h200x1-2026-12-02c/run-3/pytorch-host.json) with
# each SDPA call counted once, and the attention-only chain (16 calls x 2 microbatches, a loss):
# (gemm, attention, kernel) per stack.
FWD_COUNTS = [(48, 0, 111), (32, 8, 63), (48, 0, 111), (32, 8, 55), (0, 32, 6)]
COSTS = {"gemm": 60e-6, "attention": 140e-6, "kernel": 6e-6}
COLLECTIVE_S = 14e-6


def stacks(counts, costs, collectives=0):
    """(host_s, counts) rows whose host time is exactly the per-class model's (plus collectives)."""
    rows = []
    for g, a, k in counts:
        host_s = g * costs["gemm"] + a * costs["attention"] + k * costs["kernel"] + collectives * COLLECTIVE_S
        rows.append((host_s, {"gemm": g, "attention": a, "kernel": k, "collective": collectives}))
    return rows


# 1. Exact data: the three costs come back, the residual is 0, and collectives are taken off first.
fit = host_fit.fit_phase(stacks(FWD_COUNTS, COSTS, collectives=3), COLLECTIVE_S)
for c in host_fit.CLASSES:
    check(close(fit[c], COSTS[c]), f"exact: {c} {fit[c]} != {COSTS[c]}")
check(fit["fit"] == "fitted (gemm, attention, kernel), largest residual 0.0%", f"exact: {fit['fit']}")

# 2. Without the chain and with equal kernel counts in both SDPA stacks, the stacks have two distinct rows
# of counts: three costs cannot be told apart (the normal equations are singular). Attention is then taken
# as a GEMM launch: the two-class fit over (gemm + attention, kernel) = (48, 111) and (40, 63), which are
# independent, returns the costs exactly when the data were made with attention costing a GEMM launch.
dependent = [(48, 0, 111), (32, 8, 63), (48, 0, 111), (32, 8, 63)]
as_gemm = {"gemm": 50e-6, "attention": 50e-6, "kernel": 5e-6}
fit = host_fit.fit_phase(stacks(dependent, as_gemm), 0.0)
check(fit["fit"] == "fitted (gemm, kernel), largest residual 0.0% (attention taken as a GEMM launch: the "
      "three-class fit was unstable or negative)", f"dependent: {fit['fit']}")
for c in host_fit.CLASSES:
    check(close(fit[c], as_gemm[c]), f"dependent: {c} {fit[c]} != {as_gemm[c]}")

# 3. A negative figure: both fits refuse, every class takes the phase's time over its launches and calls.
negative = [(10, 0, 10, 100e-6), (10, 1, 10, 50e-6), (20, 0, 5, 400e-6), (0, 4, 1, 10e-6)]
rows = [(y, {"gemm": g, "attention": a, "kernel": k}) for g, a, k, y in negative]
fit = host_fit.fit_phase(rows, 0.0)
mean = sum(y for *_, y in negative) / sum(g + a + k for g, a, k, _ in negative)
check(fit["fit"].startswith("one figure for every class"), f"negative: {fit['fit']}")
check(all(close(fit[c], mean) for c in host_fit.CLASSES), f"negative: {fit}")

# 4. Kernels only (the step phase: the fused optimizer): no attention call, no GEMM, so the one-figure
# fallback, the kernels' time over their count; a stack with no launch in the phase is left out (else its
# host time would count, over no launch).
step = stacks([(0, 0, 3), (0, 0, 2), (0, 0, 3)], COSTS) + [(50e-6, {"gemm": 0, "attention": 0, "kernel": 0})]
fit = host_fit.fit_phase(step, 0.0)
check(fit["fit"].startswith("one figure"), f"kernels only: {fit['fit']}")  # the gemm column is all zero
check(close(fit["kernel"], COSTS["kernel"]), f"kernels only: {fit['kernel']}")
check(host_fit.fit_phase([(1e-3, {"gemm": 0, "kernel": 0})], 0.0) is None, "no launch: None")

# 5. pytorch_host.py --fit-only over a details file of these stacks writes the three classes per phase.
with tempfile.TemporaryDirectory() as work:
    phases = {"fwd": FWD_COUNTS, "bwd": [(96, 0, 270), (64, 8, 200), (96, 0, 206), (64, 8, 150), (0, 32, 70)],
              "step": [(0, 0, 3), (0, 0, 3), (0, 0, 2), (0, 0, 2), (0, 0, 0)]}
    details = {"collective_host_s": COLLECTIVE_S, "steps": 10, "stacks": []}
    for i, arch in enumerate(("gpt", "gpt", "llama", "llama", "sdpa-chain")):
        host_s, launches = {"other": 50e-6}, {}
        for phase, counts in phases.items():
            host_s[phase], launches[phase] = stacks([counts[i]], COSTS)[0]
        details["stacks"].append({"arch": arch, "attention": "sdpa" if i % 2 or i == 4 else "unfused",
                                  "host_s": host_s, "launches": launches})
    with open(f"{work}/details.json", "w") as f:
        json.dump(details, f)
    base = os.path.join(ROOT, "tests/data/results/h200x1-2026-12-01b/calibration/cal-heat20.json")
    script = os.path.join(ROOT, "launch/pytorch_host.py")
    # Measured before the free queue: --queue free (the default) refuses it, naming what is missing.
    run = subprocess.run([sys.executable, script, "--base", base, "-o", f"{work}/out.json", "--fit-only",
                          f"{work}/details.json"], capture_output=True, text=True)
    check(run.returncode == 2 and "--queue free" in run.stderr and "host_s_free" in run.stderr,
          f"--fit-only without host_s_free: {run.returncode} {run.stderr}")
    check(not os.path.exists(f"{work}/out.json"), "--fit-only without host_s_free: nothing written")
    run = subprocess.run([sys.executable, script, "--base", base, "-o", f"{work}/out.json", "--fit-only",
                          f"{work}/details.json", "--queue", "spin"], capture_output=True, text=True)
    check(run.returncode == 0, f"--fit-only: rc {run.returncode}: {run.stderr}")
    if run.returncode == 0:
        with open(f"{work}/out.json") as f:
            host = {r["framework"]: r for r in json.load(f)["host"]}
        issue = host["pytorch-eager"]["issue_us"]
        for phase in ("fwd", "bwd"):
            for c in host_fit.CLASSES:
                check(abs(issue[f"{phase}.{c}"] - COSTS[c] * 1e6) < 1e-3, f"--fit-only: {phase}.{c} {issue}")
        check(abs(issue["step.kernel"] - COSTS["kernel"] * 1e6) < 1e-3, f"--fit-only: step.kernel {issue}")
        check(host["megatron"]["issue_us"] == issue, "--fit-only: megatron has pytorch-eager's costs")
        check("and a chain of 16 SDPA calls alone" in host["pytorch-eager"]["source"], "--fit-only: source names the chain")
    # The same stacks with free-queue times at half the cost: the default fits those.
    for d in details["stacks"]:
        d["host_s_free"] = {p: v / 2 for p, v in d["host_s"].items()}
    with open(f"{work}/details-free.json", "w") as f:
        json.dump(details, f)
    run = subprocess.run([sys.executable, script, "--base", base, "-o", f"{work}/out-free.json", "--fit-only",
                          f"{work}/details-free.json"], capture_output=True, text=True)
    check(run.returncode == 0, f"--fit-only (free): rc {run.returncode}: {run.stderr}")
    if run.returncode == 0:
        with open(f"{work}/out-free.json") as f:
            host = {r["framework"]: r for r in json.load(f)["host"]}
        issue = host["pytorch-eager"]["issue_us"]
        check(abs(issue["fwd.gemm"] - COSTS["gemm"] * 1e6 / 2) < 1e-3, f"--fit-only (free): fwd.gemm {issue}")
        check("--queue free" in host["pytorch-eager"]["source"], "--fit-only (free): the source says which queue")
    with open(f"{work}/bad.json", "w") as f:
        json.dump({"collective_host_s": 1e-5, "stacks": [{"arch": "gpt", "host_s": {"fwd": 1}}]}, f)
    run = subprocess.run([sys.executable, script, "--base", base, "-o", f"{work}/out2.json", "--fit-only",
                          f"{work}/bad.json"], capture_output=True, text=True)
    check(run.returncode == 2 and "bad.json: not a --details file" in run.stderr, f"bad details: {run.returncode} {run.stderr}")
    check(not os.path.exists(f"{work}/out2.json"), "bad details: nothing written")

# --repeats: each stack's phase times are the median over the repeats, its launch counts the first's.
import pytorch_host  # noqa: E402

runs = [[{"arch": a, "host_s": {"fwd": f * k, "bwd": 2 * f * k}, "launches": {"fwd": {"gemm": 3}}} for a, f in
         (("gpt", 1.0), ("llama", 2.0))] for k in (1.0, 1.5, 1.1)]
merged = pytorch_host.merge_repeats(runs)
check([d["arch"] for d in merged] == ["gpt", "llama"], f"merge_repeats: stacks in order {merged}")
check(close(merged[1]["host_s"]["fwd"], 2.2) and close(merged[0]["host_s"]["bwd"], 2.2), f"merge_repeats: medians {merged}")
check(len(merged[0]["host_s_repeats"]) == 3 and merged[0]["launches"] == {"fwd": {"gemm": 3}}, "merge_repeats: kept")

if FAILURES:
    print("FAIL:\n  " + "\n  ".join(FAILURES))
    sys.exit(1)
print("host_fit: ok")
