#!/usr/bin/env python3
"""Offline (no GPU): host_ladder.py's rounds as host rows and predictions. For each round, and for the
median over rounds, the stacks' details file (host-rN.json) is fitted into the eager profiles' host rows
two ways, and the host-bound runs of the same round (or their medians) are predicted with
launch/predict_accuracy.py:
  - "classes": launch/pytorch_host.py --fit-only (its fit over gemm, attention and kernel launches);
  - "one": one figure per phase, the four block stacks' time over their launches (no class split).
Medians: each stack's phase times and each run's step and host times, over the rounds chosen (--rounds).

    python3 launch/studies/host_rounds.py --commscale build/src/commscale \\
        --ladder results/h200x1-2026-12-03d/run-17/ladder --base results/h200x1-2026-12-03b/run-11/cal-eager.json \\
        --base-llama results/h200x1-2026-12-03b/run-11/cal-eager-llama.json --rounds 1,2,3 --out OUT
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "..")
sys.path.insert(0, LAUNCH)
from pytorch_host import CHAIN, PHASES, host_rows  # noqa: E402
from study_files import open_data, plain_path  # noqa: E402


def median_details(ladder, rounds):
    docs = [json.load(open_data(os.path.join(ladder, f"host-r{r}.json"))) for r in rounds]
    out = dict(docs[0])
    out["stacks"] = []
    for i, stack in enumerate(docs[0]["stacks"]):
        d = dict(stack)
        for key in ("host_s", "host_s_free"):
            d[key] = {p: statistics.median(doc["stacks"][i][key][p] for doc in docs) for p in stack[key]}
        out["stacks"].append(d)
    return out


def clamp_other(details):
    """host_ladder.py's "other" is the step's median less its phases' medians: at times below zero."""
    for d in details["stacks"]:
        for key in ("host_s", "host_s_free"):
            d[key]["other"] = max(0.0, d[key]["other"])
    return details


def median_runs(ladder, rounds, folder):
    os.makedirs(folder, exist_ok=True)
    first = os.path.join(ladder, f"r{rounds[0]}")
    names = {os.path.basename(p).removesuffix(".gz") for p in glob.glob(os.path.join(first, "pytorch-*.txt*"))}
    for name in sorted(names):
        lines = [json.loads(open_data(os.path.join(ladder, f"r{r}", name)).readline()) for r in rounds]
        line = dict(lines[0])
        line["step_time_s"] = statistics.median(x["step_time_s"] for x in lines)
        line["host_s"] = {k: statistics.median(x["host_s"][k] for x in lines) for k in lines[0]["host_s"]}
        line["rounds"] = list(rounds)
        with open(os.path.join(folder, name), "w") as f:
            f.write(json.dumps(line) + "\n")
    return sorted(glob.glob(os.path.join(folder, "pytorch-*.txt")))


def one_figure_profile(details, base, out):
    stacks = [s for s in details["stacks"] if s["arch"] != CHAIN]
    fits = {}
    for p in PHASES:
        seconds = sum(s["host_s_free"][p] for s in stacks)
        launches = sum(n for s in stacks for c, n in s["launches"][p].items() if c != "collective")
        cost = seconds / launches
        fits[p] = {"gemm": cost, "attention": cost, "kernel": cost,
                   "fit": f"one figure: {len(stacks)} block stacks' time over their {launches} launches"}
    step_s = statistics.median(s["host_s_free"]["other"] for s in stacks)
    profile = json.load(open_data(base))
    rows = host_rows(fits, step_s, details["collective_host_s"], "host_rounds.py: one figure per phase")
    profile["host"] = [r for r in profile.get("host", []) if r["framework"] not in {x["framework"] for x in rows}] + rows
    with open(out, "w") as f:
        json.dump(profile, f, indent=1)


def summary(folder):
    with open(os.path.join(folder, "accuracy.md")) as f:
        return next((line.strip() for line in f if line.startswith("- calibrated, eager")), "no points")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--commscale", required=True)
    p.add_argument("--ladder", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--base-llama", required=True)
    p.add_argument("--rounds", default="0,1,2,3")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rounds = [int(r) for r in args.rounds.split(",")]
    os.makedirs(args.out, exist_ok=True)
    plain = tempfile.TemporaryDirectory()  # the base profiles uncompressed, for pytorch_host.py
    args.base_plain = {base: plain_path(base, plain.name) for base in (args.base, args.base_llama)}
    cases = [(f"r{r}", [r]) for r in rounds] + [("median-r" + "".join(map(str, rounds)), rounds)]
    for name, chosen in cases:
        details = clamp_other(median_details(args.ladder, chosen))
        details_path = os.path.join(args.out, f"host-{name}.json")
        with open(details_path, "w") as f:
            json.dump(details, f, indent=1)
        runs = median_runs(args.ladder, chosen, os.path.join(args.out, f"runs-{name}"))
        for fit in ("classes", "one"):
            profiles = {}
            for arch, base in (("gpt", args.base), ("llama", args.base_llama)):
                out = os.path.join(args.out, f"cal-{arch}-{name}-{fit}.json")
                if fit == "classes":
                    subprocess.run([sys.executable, os.path.join(LAUNCH, "pytorch_host.py"), "--base", args.base_plain[base], "-o", out,
                                    "--fit-only", details_path, "--queue", "free"], check=True,
                                   stdout=subprocess.DEVNULL)
                else:
                    one_figure_profile(details, base, out)
                profiles[arch] = out
            folder = os.path.join(args.out, f"accuracy-{name}-{fit}")
            subprocess.run([sys.executable, os.path.join(LAUNCH, "predict_accuracy.py"), "--commscale", args.commscale,
                            "--calibration", profiles["gpt"], "--calibration-llama", profiles["llama"],
                            "--pytorch-host-framework", "pytorch-eager", "--out", folder, *runs], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"{name:>14} {fit:>8}: {summary(folder)}")


if __name__ == "__main__":
    main()
