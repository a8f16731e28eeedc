#!/usr/bin/env python3
"""Predicts measured runs with `commscale predict` and tabulates the error (the predictor's accuracy).

Measured points are `commscale train -J` files and PyTorch reference outputs (the JSON line that
launch/pytorch_reference.py prints, in a file). For a train file the model and plan flags are read back
from its recorded command line; for a PyTorch file they are the equivalent commscale flags (a bare block
stack, `--flash-attn` for SDPA, `--kernels eager` without torch.compile). The cluster is the catalog's
for the machine the point ran on: the GPU count and NCCL's variables pick h200x1, h200x2, h200x2-nop2p
(NCCL_P2P_DISABLE=1) or h200x2-sockets (and NCCL_SHM_DISABLE=1); --cluster overrides. Each point is
predicted with and without --calibration; Llama-style points (RMSNorm, SwiGLU) with --calibration-llama
where given (launch/pytorch_kernels.py --arch llama writes its eager rows to a profile of their own: a
norm or activation row of one block is no price for the other's kernel).

Writes OUT/accuracy.csv (one row per point, plot-ready), OUT/accuracy.md (the table and the summary:
median and largest |error|) and OUT/predictions/*.json (predict's own output), and prints the summary.

usage: launch/predict_accuracy.py --commscale build/src/commscale --calibration cal.json --out DIR \\
           [--calibration-llama cal-llama.json] [--cluster NAME] TRAIN_JSON|PYTORCH_TXT ...
"""

import argparse
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys

# train flags that say how to measure, not what to run: predict does not take them.
MEASUREMENT_FLAGS_WITH_VALUE = {"--steps", "--warmup", "--timing", "-J", "--output_file", "--csv", "--trace",
                                "--timeline", "-T", "--timeout", "--backend", "--gpu"}
MEASUREMENT_FLAGS = {"--gemm-check", "--tf32", "-q", "--quiet"}


def train_point(path, doc):
    words = shlex.split(doc["context"]["command_line"])
    words = words[words.index("train") + 1:]
    flags, i = [], 0
    while i < len(words):
        word = words[i]
        name = word.split("=", 1)[0]
        if name in MEASUREMENT_FLAGS_WITH_VALUE:
            i += 1 if "=" in word else 2
            continue
        if name == "--devices":  # a list: skip to the next flag
            i += 1
            while i < len(words) and not words[i].startswith("-"):
                i += 1
            continue
        if name not in MEASUREMENT_FLAGS:
            flags.append(word)
        i += 1
    # Runs measured before flash attention became the default ran without it unless they said so.
    if not {"--flash-attn", "--use-flash-attn", "--no-flash-attn"} & {f.split("=", 1)[0] for f in flags}:
        flags.append("--no-flash-attn")
    summary = doc["summary"]
    return {"kind": "train", "flags": flags, "world": len(doc["context"]["ranks"]),
            "arch": "llama" if doc["model"].get("norm") == "rmsnorm" else "gpt",
            "environment": doc["context"].get("environment", {}),
            "measured": {k: summary.get(k) for k in ("step_time_s", "compute_s", "exposed_comm_s", "bubble_s")}}


def pytorch_point(path, doc):
    world = doc["world"]
    mode = doc["mode"]
    replicas = world if mode == "dp" else 1
    flags = ["--layers", str(doc["layers"]), "--hidden", str(doc["hidden"]), "--heads", str(doc["heads"]),
             "--seq", str(doc["seq"]), "--vocab", "0", "--micro-batch", str(doc["micro_batch"]),
             "--global-batch", str(doc["micro_batch"] * doc["microbatches"] * replicas)]
    if doc.get("arch") == "llama":  # a Llama preset's block (RMSNorm, SwiGLU, no biases) at the point's sizes
        flags = ["--model", "llama2-7b", "--kv-heads", str(doc["kv_heads"]), "--ffn", str(doc["ffn"])] + flags
    flags += {"dp": ["--dp", str(world)], "tp": ["--tp", str(world)],
              "pp": ["--pp", str(world), "--schedule", "gpipe"]}[mode]
    # The attention as run: commscale's default changed to flash attention after these were measured.
    flags.append("--flash-attn" if doc.get("attention") == "sdpa" else "--no-flash-attn")
    if not doc.get("compile"):  # eager PyTorch: its own kernel list (torch.compile fuses as Megatron does)
        flags += ["--kernels", "eager"]
    if doc.get("optimizer"):  # the reference's optimizer (torch.optim.AdamW on bf16 weights: adamw)
        flags += ["--optimizer", doc["optimizer"]]
    return {"kind": "pytorch-compile" if doc.get("compile") else "pytorch", "flags": flags, "world": world,
            "arch": doc.get("arch", "gpt"),
            "environment": {},
            "measured": {"step_time_s": doc["step_time_s"]}}


def read_point(path):
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:  # a PyTorch log: its last JSON line
        lines = [line for line in text.splitlines() if line.startswith("{")]
        if not lines:
            sys.exit(f"{path}: neither a train JSON nor a PyTorch reference output")
        doc = json.loads(lines[-1])
    point = pytorch_point(path, doc) if doc.get("tool") == "pytorch" else train_point(path, doc)
    point["file"] = path
    point["name"] = os.path.splitext(os.path.basename(path))[0]
    return point


def cluster_for(point, override):
    if override:
        return override
    env = point["environment"]
    if point["world"] == 1:
        return "h200x1"
    if env.get("NCCL_P2P_DISABLE") == "1":
        return "h200x2-sockets" if env.get("NCCL_SHM_DISABLE") == "1" else "h200x2-nop2p"
    return "h200x2"


def predict(commscale, cluster, flags, calibration, out_path):
    # The runs are commscale's own executor's (train) and eager PyTorch's (--kernels eager, --host-framework
    # as given): predicted as commscale's framework, whose defaults are the flags' own.
    framework = [] if "--framework" in flags else ["--framework", "commscale"]
    command = [commscale, "predict", "--cluster", cluster, *flags, *framework, "-J", out_path]
    if calibration:
        command += ["--calibration", calibration]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"predict failed ({result.returncode}): {shlex.join(command)}\n{result.stderr}")
    with open(out_path) as f:
        doc = json.load(f)
    return doc, shlex.join(["commscale", *command[1:]])


def figure(doc, key):
    """A figure from predict's JSON: top level or under "summary"."""
    if key in doc:
        return doc[key]
    return doc.get("summary", {}).get(key)


def error_pct(predicted, measured):
    return None if predicted is None or not measured else 100.0 * (predicted - measured) / measured


def describe(errors):
    errors = [abs(e) for e in errors if e is not None]
    if not errors:
        return "no points"
    return (f"{len(errors)} points: median |error| {statistics.median(errors):.1f}%, largest {max(errors):.1f}%, "
            f"{sum(e <= 5 for e in errors)} within 5%, {sum(e <= 10 for e in errors)} within 10%, "
            f"{sum(e <= 15 for e in errors)} within 15%")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commscale", required=True)
    parser.add_argument("--calibration")
    parser.add_argument("--calibration-llama", help="the profile for Llama-style points (default: --calibration)")
    parser.add_argument("--cluster")
    parser.add_argument("--pytorch-host-framework", help="predict PyTorch points with this --host-framework "
                        "(default: predict's own default)")
    parser.add_argument("--train-host-framework", help="predict train points with this --host-framework where "
                        "they ran without one (commscale: the executor's own host costs, from the profile's "
                        "host row or the catalog's; default: predict's own default, device time alone)")
    parser.add_argument("--out", required=True)
    parser.add_argument("points", nargs="+")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.out, "predictions"), exist_ok=True)

    rows = []
    names = set()
    for path in args.points:
        point = read_point(path)
        if point["kind"] == "pytorch" and args.pytorch_host_framework:
            point["flags"] += ["--host-framework", args.pytorch_host_framework]
        if (point["kind"] == "train" and args.train_host_framework and
                not any(f.split("=", 1)[0] == "--host-framework" for f in point["flags"])):
            point["flags"] += ["--host-framework", args.train_host_framework]
        if point["name"] in names:  # the same file name in another folder: prefix the folder's
            point["name"] = f"{os.path.basename(os.path.dirname(os.path.abspath(path)))}-{point['name']}"
        names.add(point["name"])
        cluster = cluster_for(point, args.cluster)
        base = os.path.join(args.out, "predictions", point["name"])
        row = {"point": point["name"], "measured_by": point["kind"], "cluster": cluster, "world": point["world"],
               "flags": " ".join(point["flags"]), "measured_step_s": point["measured"]["step_time_s"]}
        own = args.calibration_llama if point["arch"] == "llama" and args.calibration_llama else args.calibration
        for suffix, calibration in (("", own), ("_catalog", None)):
            if suffix and not args.calibration:
                continue
            doc, command = predict(args.commscale, cluster, point["flags"], calibration, f"{base}{suffix or '_cal'}.json")
            predicted = figure(doc, "step_time_s")
            row[f"predicted_step_s{suffix}"] = predicted
            row[f"error_pct{suffix}"] = error_pct(predicted, row["measured_step_s"])
            if not suffix:
                row["command"] = command
                for key in ("compute_s", "exposed_comm_s", "bubble_s"):
                    row[f"measured_{key}"] = point["measured"].get(key)
                    row[f"predicted_{key}"] = figure(doc, key)
        row["measured_file"] = path
        rows.append(row)

    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(os.path.join(args.out, "accuracy.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)

    def ms(value):
        return "" if value is None else f"{value * 1e3:.1f}"

    def pct(value):
        return "" if value is None else f"{value:+.1f}%"

    label = "calibrated" if args.calibration else "catalog"
    lines = ["| point | by | cluster | flags | measured | predicted | error |"
             + (" catalog only | error |" if args.calibration else ""),
             "|---|---|---|---|---|---|---|" + ("---|---|" if args.calibration else "")]
    for r in rows:
        line = (f"| {r['point']} | {r['measured_by']} | {r['cluster']} | `{r['flags']}` | {ms(r['measured_step_s'])} ms "
                f"| {ms(r['predicted_step_s'])} ms | {pct(r['error_pct'])} |")
        if args.calibration:
            line += f" {ms(r['predicted_step_s_catalog'])} ms | {pct(r['error_pct_catalog'])} |"
        lines.append(line)
    summary = [f"- {label}, {what} points: " + describe([r["error_pct"] for r in rows if r["measured_by"] == by])
               for by, what in (("train", "train"), ("pytorch", "eager PyTorch"),
                                ("pytorch-compile", "torch.compile'd PyTorch"))]
    if args.calibration:
        summary += [f"- catalog only, {what} points: "
                    + describe([r["error_pct_catalog"] for r in rows if r["measured_by"] == by])
                    for by, what in (("train", "train"), ("pytorch", "eager PyTorch"))]
    with open(os.path.join(args.out, "accuracy.md"), "w") as f:
        f.write("\n".join(lines + [""] + summary) + "\n")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
