#!/usr/bin/env python3
"""Offline (no GPU): host_layers.py's rounds read two ways.

1. Per block kind, the medians over the rounds of each stack's forward and backward host time, fitted
   as  t = per_step + per_microbatch x m + per_layer_mb x L x m  over its (L, m) shapes: is there a host
   cost per microbatch beside the one per layer (results/h200x1-2026-12-03d section 6), and per kind how
   large. Written to layers.md.
2. Host rows from the stacks and the host-bound runs predicted (launch/predict_accuracy.py, the medians
   over the rounds), with the rows fitted three ways:
   - "l4m2": launch/pytorch_host.py's fit on its own stacks only (4 layers x 2 microbatches, the chain);
   - "all": the same fit over every stack;
   - "all+mb": every stack, with a cost per microbatch and phase fitted beside the launch classes
     (launch/host_fit.py's least squares with one more column). The predictor has no such figure, so
     it is added to the row's step_us times the runs' microbatch count (all of them have the same).

    python3 launch/studies/layers_fit.py --commscale build/src/commscale --ladder run-21/layers \\
        --base results/h200x1-2026-12-03b/run-11/cal-eager.json \\
        --base-llama results/h200x1-2026-12-03b/run-11/cal-eager-llama.json --out run-21/fit
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "..")
sys.path.insert(0, LAUNCH)
from host_fit import CLASSES, fit_phase, largest_residual, least_squares, solve  # noqa: E402
from pytorch_host import CHAIN, PHASES, host_rows  # noqa: E402
from study_files import open_data  # noqa: E402


def read(ladder):
    rows = [json.loads(line) for line in open_data(os.path.join(ladder, "ladder.jsonl"))]
    collective = next(r["collective_host_s"] for r in rows if r["kind"] == "collective")
    rounds = sorted({r["round"] for r in rows if r["kind"] in ("stack", "run")})
    complete = [r for r in rounds if any(x["kind"] == "run" and x["round"] == r for x in rows)
                and len([x for x in rows if x["kind"] == "run" and x["round"] == r]) ==
                len([x for x in rows if x["kind"] == "run" and x["round"] == rounds[0]])]
    by_id = {}
    for r in rows:
        if r["kind"] in ("stack", "run") and r["round"] in complete:
            by_id.setdefault((r["kind"], r["id"]), []).append(r)
    return collective, complete, by_id


def medians(samples):
    first = next(s for s in samples if "launches" in s) if any("launches" in s for s in samples) else samples[0]
    host = {p: statistics.median(s["host_s"][p] for s in samples) for p in samples[0]["host_s"]}
    host["other"] = max(0.0, host["issue"] - sum(host[p] for p in PHASES))
    return {"settings": first["settings"], "launches": first.get("launches"), "host_s": host,
            "step_time_s": statistics.median(s["step_time_s"] for s in samples), "rounds": len(samples)}


def kind_of(stack_id):
    return stack_id.rsplit("-l", 1)[0]


def per_kind_table(stacks):
    lines = ["| block kind | phase | per step | per microbatch | per layer and microbatch | largest residual |",
             "|---|---|---|---|---|---|"]
    for kind in sorted({kind_of(i) for i in stacks}):
        mine = [s for i, s in stacks.items() if kind_of(i) == kind]
        if len(mine) < 3:
            continue
        for phase in ("fwd", "bwd"):
            ls = [s["settings"]["layers"] for s in mine]
            ms = [s["settings"]["microbatches"] for s in mine]
            ys = [s["host_s"][phase] for s in mine]
            one_m = len(set(ms)) == 1  # then a cost per step and one per microbatch are one figure
            cols = [[1.0] * len(mine)] + ([] if one_m else [[float(m) for m in ms]]) + [
                [float(lay * m) for lay, m in zip(ls, ms)]]
            normal = [[sum(a * b for a, b in zip(ci, cj)) for cj in cols] for ci in cols]
            x = solve(normal, [sum(c * y for c, y in zip(col, ys)) for col in cols])
            worst = largest_residual(cols, x, ys)
            if one_m:
                first, per_mb = f"({x[0] * 1e3:.3f} ms with the microbatches' at m = {ms[0]})", "(in per step)"
            else:
                first, per_mb = f"{x[0] * 1e3:.3f} ms", f"{x[1] * 1e3:.3f} ms"
            lines.append(f"| {kind} | {phase} | {first} | {per_mb} | {x[-1] * 1e3:.3f} ms | {100 * worst:.1f}% |")
    return "\n".join(lines)


def fit_with_microbatch(stacks, collective_s, phase):
    """The class fit of one phase with a cost per microbatch beside the classes."""
    rows = [(s["host_s"][phase], s["launches"][phase], s["settings"]["microbatches"]) for s in stacks]
    ys = [h - c.get("collective", 0) * collective_s for h, c, _ in rows]
    cols = [[c.get(k, 0) for _, c, _ in rows] for k in CLASSES] + [[m for _, _, m in rows]]
    costs = least_squares(cols, ys)
    if costs is None:
        return None
    worst = largest_residual(cols, costs, ys)
    return {**dict(zip(CLASSES, costs)), "microbatch": costs[3],
            "fit": f"fitted (gemm, attention, kernel, microbatch), largest residual {100 * worst:.1f}%"}


def details_doc(collective, stacks):
    out = []
    for i, s in stacks.items():
        arch = CHAIN if i.startswith(CHAIN) else s["settings"]["arch"]
        out.append({"arch": arch, "attention": s["settings"]["attention"], "id": i, "host_s": s["host_s"],
                    "host_s_free": s["host_s"], "launches": s["launches"]})
    return {"collective_host_s": collective, "steps": "median of rounds", "repeats": 1, "stacks": out}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--commscale", required=True)
    p.add_argument("--ladder", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--base-llama", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    collective, rounds, by_id = read(args.ladder)
    stacks = {i: medians(v) for (k, i), v in by_id.items() if k == "stack"}
    runs = {i: medians(v) for (k, i), v in by_id.items() if k == "run"}
    with open(os.path.join(args.out, "layers.md"), "w") as f:
        f.write(f"Medians of {len(rounds)} complete rounds; host time per phase fitted per block kind as "
                "per step + per microbatch x m + per layer and microbatch x L x m over its (L, m) shapes.\n\n")
        f.write(per_kind_table(stacks) + "\n")
    print(open(os.path.join(args.out, "layers.md")).read())

    run_files = []
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    for i, r in runs.items():
        line = {**r["settings"], "device": "cuda", "dtype": "bfloat16", "step_time_s": r["step_time_s"],
                "host_s": r["host_s"], "rounds": len(rounds)}
        path = os.path.join(args.out, "runs", f"pytorch-{i}.txt")
        with open(path, "w") as f:
            f.write(json.dumps(line) + "\n")
        run_files.append(path)
    run_mbs = {r["settings"]["microbatches"] for r in runs.values()}
    if len(run_mbs) != 1:
        sys.exit(f"layers_fit.py: the runs have microbatch counts {sorted(run_mbs)}; the emulation needs one")
    run_mb = run_mbs.pop()

    l4m2 = {i: s for i, s in stacks.items() if i.endswith("-l4-m2") and "nodrop" not in i}
    l4m2.update({i: s for i, s in stacks.items() if i.startswith(CHAIN)})
    block = {i: s for i, s in stacks.items() if "nodrop" not in i}
    for name, chosen in (("l4m2", l4m2), ("all", block), ("all+mb", block)):
        details = details_doc(collective, chosen)
        fits = {}
        extra = 0.0
        for phase in PHASES:
            fit = fit_with_microbatch(list(chosen.values()), collective, phase) if (
                name == "all+mb" and phase != "step") else None
            if fit is None:
                fit = fit_phase([(d["host_s"][phase], d["launches"][phase]) for d in details["stacks"]], collective)
            else:
                extra += fit["microbatch"] * run_mb
            fits[phase] = fit
        step_s = statistics.median(d["host_s"]["other"] for d in details["stacks"] if d["arch"] != CHAIN) + extra
        note = f"layers_fit.py {name}: " + "; ".join(f"{p}: {fits[p]['fit']}" for p in PHASES)
        profiles = {}
        for arch, base in (("gpt", args.base), ("llama", args.base_llama)):
            profile = json.load(open_data(base))
            rows = host_rows(fits, step_s, collective, note)
            profile["host"] = [r for r in profile.get("host", []) if r["framework"] not in {x["framework"] for x in rows}] + rows
            out = os.path.join(args.out, f"cal-{arch}-{name}.json")
            with open(out, "w") as f:
                json.dump(profile, f, indent=1)
            profiles[arch] = out
        folder = os.path.join(args.out, f"accuracy-{name}")
        subprocess.run([sys.executable, os.path.join(LAUNCH, "predict_accuracy.py"), "--commscale", args.commscale,
                        "--calibration", profiles["gpt"], "--calibration-llama", profiles["llama"],
                        "--pytorch-host-framework", "pytorch-eager", "--out", folder, *run_files], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(folder, "accuracy.md")) as f:
            summary = next((line.strip() for line in f if line.startswith("- calibrated, eager")), "no points")
        print(f"{name:>8}: {summary}  ({'; '.join(f'{p}: ' + ', '.join(f'{k} {v * 1e6:.1f}' for k, v in fits[p].items() if k != 'fit') for p in PHASES)}; step_us {step_s * 1e6:.0f})")


if __name__ == "__main__":
    main()
