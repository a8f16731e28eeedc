#!/usr/bin/env python3
"""The accuracy-by-regime grid on one GPU (issue 21): `commscale train` and the PyTorch reference at the
same points, one list of points for both (ids shared), run within a time budget, and a table of what
was measured.

A points file has one JSON object per line:

  {"id": "q05-s512", "regime": "host-bound", "arch": "llama", "layers": 8, "hidden": 896, "heads": 14,
   "kv_heads": 2, "ffn": 4864, "seq": 512, "micro_batch": 1,
   "train": ["unfused", "flash"], "pytorch": ["sdpa", "unfused"],
   "trace": ["flash"], "profile": ["sdpa"], "host_framework": ["flash"]}

`train`: the attentions commscale trains it with (flash: --flash-attn); `pytorch`: those of the reference
(sdpa: F.scaled_dot_product_attention); `trace`: train runs that also write --trace and --timeline;
`profile`: PyTorch runs that also write their kernel listing; `optimizer`: train's --optimizer (default adam); `host_framework`: train runs repeated with
--kernels eager --host-framework pytorch-eager --calibration FILE. Every run is
`--vocab 0 --steps 5 --warmup 2`, bf16, 4 microbatches per step on one rank. The PyTorch reference's
runs take 5 steps after 2 as well, but 30 after 5 at a point of regime "host-bound": eager PyTorch's
host-bound steps vary up to 75% between 5-step runs of one call, 30-step runs repeat within 0-18%
(results/h200x1-2026-12-03).

    regime_grid.py train POINTS --commscale BIN --out DIR --budget-s 170 [--dry-run]
    regime_grid.py host-framework POINTS --commscale BIN --out DIR --calibration FILE --budget-s 60 [--dry-run]
    regime_grid.py pytorch-grid POINTS --out DIR            (writes DIR/grid.jsonl for pytorch_reference.py)
    regime_grid.py split-pytorch DIR/grid.txt DIR           (one file per run, as predict_accuracy.py reads)
    regime_grid.py table POINTS --train DIR --pytorch DIR

`train` runs points in file order (put the most important first) and starts none once the budget is
spent; each run has its own timeout. With --dry-run nothing is trained on a GPU: every run's model and
plan flags are checked by `commscale plan`, and the first run is trained for real on the CPU backend at
a reduced size (1 layer, sequence 128), its output marked as a dry run.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

KEYS = {"id": str, "regime": str, "arch": str, "layers": int, "hidden": int, "heads": int, "kv_heads": int,
        "ffn": int, "seq": int, "micro_batch": int, "train": list, "pytorch": list, "trace": list, "profile": list,
        "host_framework": list, "optimizer": str}
REQUIRED = ("id", "arch", "layers", "hidden", "heads", "seq", "micro_batch")
MICROBATCHES = 4
STEPS = ["--steps", "5", "--warmup", "2"]
PYTORCH_STEPS = {"host-bound": {"steps": 30, "warmup": 5}}  # by regime; others {"steps": 5, "warmup": 2}


def fail(message):
    print(f"regime_grid.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_points(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e}")
    points, ids = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            p = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{where}: {e}")
        for key, value in p.items():
            if key not in KEYS:
                fail(f"{where}: unknown key \"{key}\"")
            if not isinstance(value, KEYS[key]) or isinstance(value, bool):
                fail(f"{where}: \"{key}\" is {json.dumps(value)}, expected {KEYS[key].__name__}")
        for key in REQUIRED:
            if key not in p:
                fail(f"{where}: no \"{key}\"")
        if p["arch"] not in ("gpt", "llama") or (p["arch"] == "llama" and "ffn" not in p):
            fail(f"{where}: arch gpt, or llama with ffn")
        for key, allowed in (("train", {"unfused", "flash"}), ("trace", {"unfused", "flash"}),
                             ("host_framework", {"unfused", "flash"}), ("pytorch", {"unfused", "sdpa"}),
                             ("profile", {"unfused", "sdpa"})):
            if not set(p.get(key, [])) <= allowed:
                fail(f"{where}: \"{key}\" takes {', '.join(sorted(allowed))}")
        if p["id"] in ids:
            fail(f"{where}: id \"{p['id']}\" appears twice")
        ids.add(p["id"])
        points.append(p)
    return points


def model_flags(p):
    """commscale's flags for the point's block stack (a llama preset's block at the point's sizes)."""
    flags = ["--model", "llama2-7b"] if p["arch"] == "llama" else []
    flags += ["--layers", str(p["layers"]), "--hidden", str(p["hidden"]), "--heads", str(p["heads"]),
              "--kv-heads", str(p.get("kv_heads", p["heads"])), "--seq", str(p["seq"]), "--vocab", "0"]
    if p["arch"] == "llama":
        flags += ["--ffn", str(p["ffn"])]
    if "optimizer" in p:  # e.g. adamw (bf16 moments, no fp32 master) where Adam's states do not fit
        flags += ["--optimizer", p["optimizer"]]
    mb = p["micro_batch"]
    return flags + ["--micro-batch", str(mb), "--global-batch", str(MICROBATCHES * mb)]


def attention_flags(attention):
    return ["--flash-attn"] if attention == "flash" else ["--no-flash-attn"]  # flash is the default


def mpirun():
    args = ["mpirun", "-np", "1", "--bind-to", "none"]
    return args + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


class Runner:
    """Runs commands in order within a budget, logging each command line to OUT/commands.txt."""

    def __init__(self, out, budget_s, timeout_s):
        self.out = out
        self.deadline = time.monotonic() + budget_s
        self.timeout_s = timeout_s
        os.makedirs(out, exist_ok=True)

    def run(self, name, command):
        left = self.deadline - time.monotonic()
        if left < 5:
            print(f"{name}: skipped, the budget is spent", flush=True)
            return None
        with open(os.path.join(self.out, "commands.txt"), "a") as f:
            f.write(f"{name}: {shlex.join(command)}\n")
        start = time.monotonic()
        try:
            with open(os.path.join(self.out, f"{name}.txt"), "w") as log:
                rc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=min(self.timeout_s, left)).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        print(f"{name}: rc {rc}, {time.monotonic() - start:.1f} s", flush=True)
        return rc


def step_ms(path):
    try:
        with open(path) as f:
            return json.load(f)["summary"]["step_time_s"] * 1e3
    except (OSError, ValueError, KeyError, TypeError):
        return None


def train_runs(points, kind):
    for p in points:
        for attention in p.get(kind, []):
            yield p, attention, f"{p['id']}-{attention}"


def dry_run_check(commscale, points, kind):
    """--dry-run: every run's flags through `commscale plan`, and the first run on the CPU backend at a
    reduced size (its output says so)."""
    failed = 0
    for p, attention, name in train_runs(points, kind):
        command = [commscale, "plan", *model_flags(p), *attention_flags(attention)]
        if kind == "host_framework":
            command += ["--kernels", "eager"]
        rc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        print(f"DRY RUN {name}: commscale plan {'accepts' if rc.returncode == 0 else 'REFUSES'} its flags"
              + ("" if rc.returncode == 0 else f": {rc.stderr.strip()}"), flush=True)
        failed |= rc.returncode != 0
    return failed


def train(args):
    points = read_points(args.points)
    kind = "host_framework" if args.command == "host-framework" else "train"
    if args.dry_run and dry_run_check(args.commscale, points, kind):
        return 1
    runner = Runner(args.out, args.budget_s, args.timeout_s)  # the budget is the runs', not the checks'
    for p, attention, name in train_runs(points, kind):
        if args.dry_run:  # the run as written, at a reduced size, on the CPU backend
            p = dict(p, layers=1, seq=128)
            name = f"DRYRUN-{name}"
        flags = model_flags(p) + attention_flags(attention)
        prefix = "hostfw-" if kind == "host_framework" else "train-"
        files = ["-J", os.path.join(args.out, f"{prefix}{name}.json")]
        if kind == "train" and attention in p.get("trace", []):
            files += ["--trace", os.path.join(args.out, f"trace-{name}.json"),
                      "--timeline", os.path.join(args.out, f"timeline-{name}.json")]
        if kind == "host_framework":
            flags += ["--kernels", "eager", "--host-framework", "pytorch-eager", "--calibration", args.calibration]
        if args.dry_run:
            flags += ["--backend", "cpu"]
        runner.run(f"{prefix}{name}", [*mpirun(), args.commscale, "train", *flags, *STEPS, "-q", *files])
        if args.dry_run:
            break  # one real run shows the flags work end to end; the others were checked by plan
    return 0


def pytorch_grid(args):
    points = read_points(args.points)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "grid.jsonl")
    with open(path, "w") as f:
        for p in points:
            for attention in p.get("pytorch", []):
                line = {"id": f"{p['id']}-{attention}", "arch": p["arch"], "layers": p["layers"],
                        "hidden": p["hidden"], "heads": p["heads"], "kv_heads": p.get("kv_heads", p["heads"]),
                        "seq": p["seq"], "micro_batch": p["micro_batch"], "microbatches": MICROBATCHES,
                        "attention": attention,
                        **PYTORCH_STEPS.get(p.get("regime"), {"steps": 5, "warmup": 2})}
                if p["arch"] == "llama":
                    line["ffn"] = p["ffn"]
                if attention in p.get("profile", []):
                    line["profile"] = os.path.join(args.out, f"prof-{p['id']}-{attention}.json")
                f.write(json.dumps(line) + "\n")
    print(path)
    return 0


def split_pytorch(args):
    """One file per run of a grid's output (pytorch-ID.txt), as launch/predict_accuracy.py reads them."""
    try:
        with open(args.grid_output) as f:
            lines = [json.loads(line) for line in f if line.startswith("{")]
    except (OSError, ValueError) as e:
        fail(f"{args.grid_output}: {e}")
    for doc in lines:
        if doc.get("tool") != "pytorch" or not doc.get("id") or "step_time_s" not in doc:
            continue
        with open(os.path.join(args.out, f"pytorch-{doc['id']}.txt"), "w") as f:
            f.write(json.dumps(doc) + "\n")
    return 0


def table(args):
    points = read_points(args.points)
    pytorch = {}
    for name in os.listdir(args.pytorch) if os.path.isdir(args.pytorch) else []:
        if name.startswith("pytorch-") and name.endswith(".txt"):
            with open(os.path.join(args.pytorch, name)) as f:
                doc = json.loads(f.readline())
            pytorch[doc["id"]] = doc["step_time_s"] * 1e3

    def cell(value):
        return f"{value:9.1f}" if value is not None else f"{'-':>9}"

    print(f"{'point':<22} {'regime':<11} {'train':>9} {'train fl':>9} {'torch':>9} {'torch sd':>9} "
          f"{'hostfw fl':>9}   (ms per step; fl: --flash-attn, sd: SDPA; hostfw: train --host-framework "
          f"pytorch-eager --kernels eager --flash-attn)")
    for p in points:
        i = p["id"]
        row = [step_ms(os.path.join(args.train, f"train-{i}-unfused.json")),
               step_ms(os.path.join(args.train, f"train-{i}-flash.json")), pytorch.get(f"{i}-unfused"),
               pytorch.get(f"{i}-sdpa"), step_ms(os.path.join(args.train, f"hostfw-{i}-flash.json"))]
        print(f"{i:<22} {p.get('regime', ''):<11} " + " ".join(cell(v) for v in row))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("train", "host-framework"):
        s = sub.add_parser(name)
        s.add_argument("points")
        s.add_argument("--commscale", required=True)
        s.add_argument("--out", required=True)
        s.add_argument("--budget-s", type=float, default=170)
        s.add_argument("--timeout-s", type=float, default=60, help="one run's limit")
        s.add_argument("--dry-run", action="store_true")
        if name == "host-framework":
            s.add_argument("--calibration", required=True)
    s = sub.add_parser("pytorch-grid")
    s.add_argument("points")
    s.add_argument("--out", required=True)
    s = sub.add_parser("split-pytorch")
    s.add_argument("grid_output")
    s.add_argument("out")
    s = sub.add_parser("table")
    s.add_argument("points")
    s.add_argument("--train", required=True)
    s.add_argument("--pytorch", required=True)
    args = parser.parse_args()
    handler = {"train": train, "host-framework": train, "pytorch-grid": pytorch_grid,
               "split-pytorch": split_pytorch, "table": table}[args.command]
    sys.exit(handler(args))


if __name__ == "__main__":
    main()
