#!/usr/bin/env python3
"""An offline check (no GPU) of one alternative host model for eager PyTorch: a host cost per block kind,
each stack's measured phase time (launch/pytorch_host.py --details) spread evenly over the ops that
commscale's program of the same stack has in that phase, with no fit across stacks. Writes one profile
per (arch, attention) from the given eager profiles with their pytorch-eager host row replaced, and
predicts the host-bound PyTorch runs given with the profile of their block kind.

    python3 launch/studies/per_block_host.py build-tests/src/commscale \\
        results/h200x1-2026-12-03b/run-10/host.json results/h200x1-2026-12-03b/run-11/cal-full.json \\
        results/h200x1-2026-12-03b/run-11/cal-full-llama.json OUT results/h200x1-2026-12-03b/run-10/pytorch/a/pytorch-*.txt

(the stacks: hidden 256, 4 heads, seq 128, micro-batch 1, 4 layers, 2 microbatches; pytorch_host.py).
"""
import json
import os
import subprocess
import sys

from study_files import open_data

STACK = ["--layers", "4", "--hidden", "256", "--heads", "4", "--seq", "128", "--vocab", "0", "--micro-batch", "1",
         "--global-batch", "2", "--dp", "1", "--kernels", "eager", "--optimizer", "adamw"]
ARCH = {"gpt": [], "llama": ["--model", "llama2-7b", "--kv-heads", "4", "--ffn", "704"]}
PHASES = ("fwd", "bwd", "step")


def ops_per_phase(commscale, arch, attention, work):
    program = os.path.join(work, f"program-{arch}-{attention}.json")
    flags = ARCH[arch] + STACK + ["--flash-attn" if attention == "sdpa" else "--no-flash-attn"]
    subprocess.run([commscale, "plan", *flags, "--dump-program", program], check=True, stdout=subprocess.DEVNULL)
    count = dict.fromkeys(PHASES, 0)
    for op in json.load(open(program))["programs"][0]:
        if op.get("flash_continued"):  # one call for a fused attention kernel
            continue
        phase = "fwd" if op["phase"] == "recompute" else op["phase"]
        if phase in count:
            count[phase] += 1
    return count


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    commscale, host_json, gpt_profile, llama_profile, out, *runs = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    bases = {"gpt": gpt_profile, "llama": llama_profile}
    for stack in json.load(open_data(host_json))["stacks"]:
        arch, attention = stack["arch"], stack["attention"]
        if arch not in bases:
            continue
        count = ops_per_phase(commscale, arch, attention, out)
        per_op = {phase: stack["host_s"][phase] / count[phase] * 1e6 for phase in PHASES}
        profile = json.load(open_data(bases[arch]))
        for row in profile["host"]:
            if row["framework"] == "pytorch-eager":
                row["issue_us"] = {f"{p}.{c}": per_op[p] for p in PHASES for c in ("gemm", "kernel", "attention")} | {
                    "collective": row["issue_us"].get("collective", 20), "p2p": row["issue_us"].get("p2p", 20)}
                row["step_us"] = stack["host_s"]["other"] * 1e6
                row["source"] = f"per_block_host.py: the {arch} {attention} stack's phase time over its program's ops"
        with open(os.path.join(out, f"cal-{arch}-{attention}.json"), "w") as f:
            json.dump(profile, f)
        print(f"# {arch} {attention}: ops {count}, us per op " + ", ".join(f"{p} {v:.1f}" for p, v in per_op.items()))
    for run in runs:
        name = os.path.basename(run)[:-4]
        arch = "llama" if name.startswith(("pytorch-q05", "pytorch-l")) else "gpt"  # points.jsonl's ids
        attention = "sdpa" if name.endswith("sdpa") else "unfused"
        profile = os.path.join(out, f"cal-{arch}-{attention}.json")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "predict_accuracy.py"),
                        "--commscale", commscale, "--calibration", profile, "--calibration-llama", profile,
                        "--pytorch-host-framework", "pytorch-eager", "--out", os.path.join(out, name), run],
                       check=True, stdout=subprocess.DEVNULL)
        for line in open(os.path.join(out, name, "accuracy.md")):
            if line.startswith("| pytorch-"):
                cells = [c.strip() for c in line.split("|")]
                print(f"{name:>40}  measured {cells[5]:>10}  predicted {cells[6]:>10}  {cells[7]:>7}")


if __name__ == "__main__":
    main()
