#!/usr/bin/env python3
"""Predicts every published training step of a validation table with commscale and reports the error.

Each row of the table (launch/validate-published.json) describes a published run as its user would
describe it to commscale: a catalog cluster and node count, the framework it ran, and the launch line's
flags (Megatron-LM's names are commscale's second names). The script runs `commscale predict --json` per
row and compares the predicted step time with the measured one: a row gives either the step time
(`measured.step_s`) or Megatron-LM's TFLOP/s per GPU (`measured.tflops_per_gpu`), which is turned into a
step time with the paper's own FLOP count (with recompute: 96 B s l h^2 (1 + s/(6h) + V/(16 l h))).

Error = predicted / measured - 1: negative is optimistic (predicted faster than it ran). Per regime (GPU,
framework, TP, PP, DP, one node or several) it prints the signed mean error and the mean absolute
percentage error (MAPE), and writes every row and regime to --out as JSON and markdown.

    python3 launch/validate.py --commscale build/src/commscale --out results/validation
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--rows", default=os.path.join(root, "launch", "validate-published.json"),
                   help="validation table (default: launch/validate-published.json)")
    p.add_argument("--commscale", default=os.path.join(root, "build", "src", "commscale"),
                   help="commscale executable (default: build/src/commscale)")
    p.add_argument("--out", help="folder for validation.json and validation.md (default: print only)")
    p.add_argument("--only", help="comma-separated row ids to run (default: every row)")
    p.add_argument("--extra", default="", help="flags added to every row's predict (a what-if)")
    p.add_argument("--jobs", type=int, default=1,
                   help="rows predicted at a time (default 1; more changes the rows' predict_wall_s, not predictions)")
    p.add_argument("--coverage", help="a validation file (topologies/validation.json) whose entries for the "
                   "GPUs and frameworks of these rows are replaced by this run's figures")
    return p.parse_args(argv)


def fail(message):
    print(f"validate.py: {message}", file=sys.stderr)
    sys.exit(2)


def load_rows(path, only):
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")
    if table.get("kind") != "commscale-validation-rows":
        fail(f'{path}: kind: expected "commscale-validation-rows"')
    rows = table.get("rows", [])
    for i, row in enumerate(rows):
        for key in ("id", "source", "cluster", "nodes", "gpus", "framework", "flags", "measured"):
            if key not in row:
                fail(f"{path}: rows[{i}].{key}: is missing")
        if row["source"] not in table.get("sources", {}):
            fail(f"{path}: rows[{i}].source: {row['source']!r} is not a key of sources")
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {r["id"] for r in rows}
        if unknown:
            fail(f"--only: no row {', '.join(sorted(unknown))} in {path}")
        rows = [r for r in rows if r["id"] in wanted]
    return table, rows


def flag_value(flags, *names, default=None):
    for i, word in enumerate(flags):
        if word in names and i + 1 < len(flags):
            return flags[i + 1]
    return default


def megatron_step_flops(flags):
    """The FLOPs of one step as Narayanan et al. count them (full recompute), from the row's flags."""
    b = int(flag_value(flags, "--global-batch-size", "--global-batch"))
    s = int(flag_value(flags, "--seq-length", "--seq"))
    l = int(flag_value(flags, "--num-layers", "--layers"))
    h = int(flag_value(flags, "--hidden-size", "--hidden"))
    v = int(flag_value(flags, "--vocab-size", "--vocab"))
    return 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h))


def predict(commscale, row, extra):
    flags = shlex.split(row["flags"])
    cmd = [commscale, "predict", "--cluster", row["cluster"], "--nodes", str(row["nodes"]), "--world", str(row["gpus"]),
           "--framework", row["framework"], *flags, *shlex.split(extra), "--json"]
    started = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    # Exit code 1: the plan does not fit in memory; the step is still predicted.
    if run.returncode not in (0, 1):
        fail(f"row {row['id']}: {shlex.join(cmd)} exited {run.returncode}: {run.stderr.strip()}")
    return cmd, json.loads(run.stdout), seconds


def measured_step(row, flags, gpus):
    m = row["measured"]
    if "step_s" in m:
        return float(m["step_s"])
    if "tflops_per_gpu" in m:
        return megatron_step_flops(flags) / (float(m["tflops_per_gpu"]) * 1e12 * gpus)
    fail(f"row {row['id']}: measured: expected step_s or tflops_per_gpu")
    return None


def regimes(row, plan, gpu):
    nodes = int(row["nodes"])
    tags = [f"gpu {gpu}", f"framework {row['framework']}", "one node" if nodes == 1 else "several nodes"]
    for name in ("tp", "pp", "dp"):
        tags.append(f"{name} > 1" if plan[name] > 1 else f"{name} = 1")
    if plan.get("ep", 1) > 1:  # written only for a model with experts split
        tags.append("ep > 1")
    return tags


def summarize(errors):
    return {
        "rows": len(errors),
        "signed_mean_pct": 100.0 * statistics.fmean(errors),
        "mape_pct": 100.0 * statistics.fmean(abs(e) for e in errors),
        "ratio_min": 1.0 + min(errors),
        "ratio_max": 1.0 + max(errors),
    }


def main(argv):
    args = parse_args(argv)
    table, rows = load_rows(args.rows, args.only)
    if args.jobs < 1:
        fail(f"--jobs: {args.jobs}: expected 1 or more")
    results = []
    # Rows run args.jobs at a time (separate processes) and are reported in table order.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        outputs = pool.map(lambda row: predict(args.commscale, row, args.extra), rows)
        for row, (cmd, out, seconds) in zip(rows, outputs):
            plan = out["plan"]
            gpus = int(out["world_size"])
            gpu = out["cluster"]["gpu"]
            measured = measured_step(row, shlex.split(row["flags"]), gpus)
            predicted = float(out["summary"]["step_time_s"])
            results.append({
                "id": row["id"], "source": row["source"], "regimes": regimes(row, plan, gpu),
                "command": shlex.join(["commscale", *cmd[1:]]), "gpus": gpus,
                "measured_step_s": measured, "predicted_step_s": predicted,
                "error": predicted / measured - 1.0, "predict_wall_s": seconds,
            })
            print(f"{row['id']:<22} {gpus:>5} GPUs  measured {measured:9.3f} s  predicted {predicted:9.3f} s  "
                  f"{100.0 * (predicted / measured - 1.0):+6.1f}%", flush=True)
    by_regime = {}
    for r in results:
        for tag in ["all rows", *r["regimes"]]:
            by_regime.setdefault(tag, []).append(r["error"])
    summary = {tag: summarize(errors) for tag, errors in by_regime.items()}
    lines = ["| regime | rows | signed mean | MAPE | predicted / measured |", "|---|---|---|---|---|"]
    for tag, s in summary.items():
        lines.append(f"| {tag} | {s['rows']} | {s['signed_mean_pct']:+.1f}% | {s['mape_pct']:.1f}% | "
                     f"{s['ratio_min']:.2f}-{s['ratio_max']:.2f} |")
    print("\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        version = subprocess.run([args.commscale, "--version"], capture_output=True, text=True, check=False)
        doc = {"schema_version": 1, "kind": "commscale-validation", "commscale": version.stdout.strip(),
               "rows_file": os.path.relpath(args.rows, args.out), "extra_flags": args.extra,
               "rows": results, "regimes": summary}
        with open(os.path.join(args.out, "validation.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        with open(os.path.join(args.out, "validation.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    if args.coverage:
        write_coverage(args.coverage, results, os.path.relpath(args.rows, os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
    return 0


def write_coverage(path, results, rows_file):
    """Replaces the file's entries of every (GPU, framework) pair these rows cover with this run's errors."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        doc = {"schema_version": 1, "kind": "validation", "note": "", "entries": []}
    pairs = {}
    for r in results:
        gpu = next(t[4:] for t in r["regimes"] if t.startswith("gpu "))
        framework = next(t[10:] for t in r["regimes"] if t.startswith("framework "))
        pairs.setdefault((gpu, framework), []).append(r["error"])
    kept = [e for e in doc["entries"] if (e["gpu"], e["framework"]) not in pairs]
    for (gpu, framework), errors in sorted(pairs.items()):
        s = summarize(errors)
        kept.append({"gpu": gpu, "framework": framework, "rows": s["rows"],
                     "signed_mean_pct": round(s["signed_mean_pct"], 1), "mape_pct": round(s["mape_pct"], 1),
                     "against": f"published runs of {rows_file}, catalog figures only (launch/validate.py)"})
    doc["entries"] = kept
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
