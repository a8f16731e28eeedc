#!/usr/bin/env python3
"""Holds the collective model against the committed bench sweeps: predicted vs measured time per
collective, path class and size, and the medians per size regime.

Measured: a directory written by launch/compare-nccl-tests.sh (default
results/h200x2-2026-12-01/compare): commscale bench (cs-*) and nccl-tests (nt-*) text tables of
all_reduce, all_gather, reduce_scatter, alltoall and sendrecv on 2 x H200 over NVLink, with
NCCL_P2P_DISABLE=1 (host-staged) and with P2P and SHM disabled (sockets), plus the small-message
repeats (small-cs-*, small-nt-*: 8 B - 4 KiB, 100 iterations). At each size the measured time is the
median, over every repetition of both tools, of the out-of-place time column (bench's and nccl-tests'
"time": the back-to-back loop divided by its iterations); at sizes the small-message repeats cover,
those repeats alone (100 iterations instead of 20 or 10: the full sweeps carry the loop's start,
1-3 us there, see the README).

Predicted: `commscale predict --collective ... --cluster C -J` with C = h200x2, h200x2-nop2p and
h200x2-sockets (the catalog's clusters of those three configurations), no calibration profile.

Regimes: small <= 64 KiB < mid <= 64 MiB < large. Error = predicted / measured - 1.

It also derives, from the same files, the measured terms of the model (src/predict/comm_measured.hpp)
so that their derivation can be re-run: the per-step latency of the host-staged and socket paths, and
the NVLink Simple efficiency and ramp.

Writes OUT/comparison.csv (one row per collective, path and size) and OUT/README.md (the tables);
with --before CSV (an earlier comparison.csv) the README gives the errors before and after. With
--check it exits 1 when a regime's median or worst error leaves the bounds in BOUNDS; with
--expect DIR, when OUT's two files differ from DIR's (the committed results are not what this build
predicts).

usage: launch/collective_latency.py --commscale BUILD/src/commscale [--measured DIR] [--out DIR]
           [--before CSV] [--check] [--expect DIR]
"""

import argparse
import csv
import difflib
import glob
import gzip
import json
import math
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MEASURED = os.path.join(ROOT, "results/h200x2-2026-12-01/compare")
ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+-?\d+\s+(.*)$")
PATHS = [("nvlink", "NVLink", "h200x2"), ("p2p-off", "host-staged", "h200x2-nop2p"),
         ("sockets", "sockets", "h200x2-sockets")]
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"]
REGIMES = ["small", "mid", "large"]
SMALL, MID = 64 << 10, 64 << 20
# Bounds of --check: the largest median |error| and worst |error| (percent) per path class and regime.
BOUNDS = {
    ("NVLink", "small"): (25, 40), ("NVLink", "mid"): (20, 40), ("NVLink", "large"): (15, 25),
    ("host-staged", "small"): (15, 40), ("host-staged", "mid"): (15, 30), ("host-staged", "large"): (15, 15),
    ("sockets", "small"): (15, 75), ("sockets", "mid"): (35, 75), ("sockets", "large"): (15, 30),
}


def regime(size):
    return "small" if size <= SMALL else ("mid" if size <= MID else "large")


def human(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            return f"{size / unit:g} {name}"
    return f"{size} B"


def open_text(path):
    """A text file, or its gzip-compressed copy (PATH.gz, as results/ stores bulky files)."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt")
    return open(path)


def shown(path):
    """PATH as the README names it: relative to the repository, a fixture (tests/data/results/...: a copy of
    the file of the same path under results/) by the path of what it copies."""
    rel = os.path.relpath(path, ROOT)
    return rel[len("tests/data/"):] if rel.startswith("tests/data/results/") else rel


def read_table(path):
    """{size: out-of-place time in us} of one bench or nccl-tests text output (or its .gz)."""
    rows = {}
    with open_text(path) as f:
        for line in f:
            m = ROW.match(line)
            if m and int(m.group(1)) > 0:
                rows[int(m.group(1))] = float(m.group(3).split()[0])
    return rows


def measured(directory, transport, collective):
    """{size: (median us, min us, max us, repetitions)} over both tools' repetitions."""
    def tables(prefix):
        paths = []
        for tool in ("cs", "nt"):
            pattern = os.path.join(directory, f"{prefix}{tool}-{transport}-{collective}-[0-9]*.txt")
            found = {p[:-3]: p for p in glob.glob(pattern + ".gz")}
            found.update({p: p for p in glob.glob(pattern)})  # the plain file where both are there
            paths += [found[p] for p in sorted(found)]
        return [read_table(p) for p in paths]
    full, small = tables(""), tables("small-")
    out = {}
    for size in sorted(set().union(*full, *small)):
        source = small if any(size in t for t in small) else full
        values = [t[size] for t in source if size in t]
        out[size] = (statistics.median(values), min(values), max(values), len(values))
    return out


def predict(commscale, cluster, largest):
    command = [commscale, "predict", "--cluster", cluster, "--collective", ",".join(COLLECTIVES), "-b", "8", "-e",
               str(largest), "-f", "2", "--json"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"collective_latency.py: {' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    doc = json.loads(result.stdout)
    return {(r["collective"], r["size_bytes"]): r for r in doc["results"]}, " ".join(["commscale", *command[1:]])


def compare(commscale, directory):
    rows, commands = [], []
    for transport, label, cluster in PATHS:
        data = {c: measured(directory, transport, c) for c in COLLECTIVES}
        largest = max((s for d in data.values() for s in d), default=0)
        if largest == 0:
            continue
        predicted, command = predict(commscale, cluster, largest)
        commands.append(command)
        for c in COLLECTIVES:
            for size, (t, lo, hi, n) in data[c].items():
                p = predicted.get((c, size))
                if p is None:
                    continue
                rows.append({"path": label, "cluster": cluster, "collective": c, "size_bytes": size,
                             "regime": regime(size), "measured_us": t, "measured_min_us": lo, "measured_max_us": hi,
                             "repetitions": n, "predicted_us": p["time_us"], "latency_us": p["latency_us"],
                             "algo": p["algo"], "proto": p["proto"], "ratio": p["time_us"] / t})
    return rows, commands


def stats(rows):
    errors = [abs(r["ratio"] - 1) * 100 for r in rows]
    worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
    return {"n": len(rows), "median_ratio": statistics.median(r["ratio"] for r in rows),
            "median_error": statistics.median(errors), "worst": worst}


def by_regime(rows):
    out = {}
    for label in dict.fromkeys(r["path"] for r in rows):
        for reg in REGIMES:
            chosen = [r for r in rows if r["path"] == label and r["regime"] == reg]
            if chosen:
                out[(label, reg)] = stats(chosen)
    return out


def worst_text(s):
    w = s["worst"]
    return f"{w['ratio']:.2f} ({w['collective']} {human(w['size_bytes'])})"


def fit_line(points):
    """Least squares of y = a x through the origin: a."""
    return sum(x * y for x, y in points) / sum(x * x for x, _ in points)


def derivations(directory):
    """The measured terms of src/predict/comm_measured.hpp, derived again from the sweeps."""
    lines = []
    base = 6.6  # NCCL's ring LL base latency (NCCL's src/graph/tuning.cc)
    steps = {"all_reduce": 2, "all_gather": 1, "reduce_scatter": 1}
    for transport, label, _ in PATHS[1:]:
        points = [(steps[c], t - base) for c in steps
                  for size, (t, _, _, _) in measured(directory, transport, c).items() if size <= 4096]
        hop = fit_line(points)
        lines.append(f"- {label} step latency: least squares of t - {base} us = steps x hop over the ring "
                     f"collectives at 8 B - 4 KiB (all-reduce 2 steps, all-gather and reduce-scatter 1): "
                     f"**{hop:.2f} us** per step ({len(points)} points).")
        for c in ("sendrecv", "alltoall"):
            small = [t for size, (t, _, _, _) in measured(directory, transport, c).items() if size <= 4096]
            if small:
                m = statistics.median(small)
                lines.append(f"  {c} at 8 B - 4 KiB: median {m:.2f} us = {base} + {(m - base) / hop:.2f} steps.")
    # NVLink Simple: t - L = T / (eta B) + c sqrt(T) over all-reduce >= 2 MiB, relative least squares.
    latency, bus = 15.2, 370.8  # NCCL's ring Simple latency for 2 ranks (8.4 + 2 x 3.4), 18 x 20.6 GB/s
    ar = [(s, t) for s, (t, _, _, _) in measured(directory, "nvlink", "all_reduce").items() if s >= 2 << 20]
    # Minimize sum((a x1 + c x2 - y)^2 / t^2), x1 = T / B (us), x2 = sqrt(T), y = t - L.
    s11 = s12 = s22 = s1y = s2y = 0.0
    for size, t in ar:
        w = 1.0 / (t * t)
        x1, x2, y = size / (bus * 1e3), math.sqrt(size), t - latency
        s11, s12, s22 = s11 + w * x1 * x1, s12 + w * x1 * x2, s22 + w * x2 * x2
        s1y, s2y = s1y + w * x1 * y, s2y + w * x2 * y
    det = s11 * s22 - s12 * s12
    a, c = (s1y * s22 - s2y * s12) / det, (s11 * s2y - s12 * s1y) / det
    lines.append(f"- NVLink ring Simple: relative least squares of t - {latency} us = bytes / (eta x {bus} GB/s) "
                 f"+ ramp x sqrt(bytes) over all_reduce at 2 MiB - 4 GiB ({len(ar)} sizes): "
                 f"**eta = {1 / a:.3f}, ramp = {c:.5f} us per sqrt(byte)**.")
    return lines


def table_md(summary, before=None):
    head = "| path | regime | points | median ratio | median \\|error\\| | worst |"
    rule = "|---|---|---|---|---|---|"
    if before:
        head += " before: median ratio | median \\|error\\| | worst |"
        rule += "---|---|---|"
    lines = [head, rule]
    for (label, reg), s in summary.items():
        line = (f"| {label} | {reg} | {s['n']} | {s['median_ratio']:.2f} | {s['median_error']:.0f}% "
                f"| {worst_text(s)} |")
        if before:
            b = before.get((label, reg))
            line += (f" {b['median_ratio']:.2f} | {b['median_error']:.0f}% | {worst_text(b)} |" if b else " | | |")
        lines.append(line)
    return lines


def per_collective_md(rows, before_rows):
    """Median and worst |error| per path, collective and regime; before them, the earlier model's."""
    def cell(chosen):
        if not chosen:
            return ""
        errors = [abs(r["ratio"] - 1) * 100 for r in chosen]
        return f"{statistics.median(errors):.0f}% / {max(errors):.0f}%"
    lines = ["| path | collective | " + " | ".join(f"{reg}: median / worst \\|error\\|" for reg in REGIMES)
             + ("".join(f" | before, {reg}" for reg in REGIMES) if before_rows else "") + " |",
             "|---|---|" + "---|" * (len(REGIMES) * (2 if before_rows else 1))]
    for label in dict.fromkeys(r["path"] for r in rows):
        for c in COLLECTIVES:
            def pick(source, reg):
                return [r for r in source if r["path"] == label and r["collective"] == c and r["regime"] == reg]
            cells = [cell(pick(rows, reg)) for reg in REGIMES]
            if before_rows:
                cells += [cell(pick(before_rows, reg)) for reg in REGIMES]
            lines.append(f"| {label} | {c} | " + " | ".join(cells) + " |")
    return lines


def full_md(rows, before_rows):
    lines = []
    old = {(r["path"], r["collective"], int(r["size_bytes"])): float(r["predicted_us"]) for r in before_rows}
    for label in dict.fromkeys(r["path"] for r in rows):
        lines += [f"<details><summary>{label}: every size</summary>", "",
                  "| collective | size | measured us (min - max, reps) | predicted us | ratio | algo proto | latency us |"
                  + (" before us | before ratio |" if old else ""),
                  "|---|---|---|---|---|---|---|" + ("---|---|" if old else "")]
        for r in (r for r in rows if r["path"] == label):
            line = (f"| {r['collective']} | {human(r['size_bytes'])} | {r['measured_us']:.2f} ({r['measured_min_us']:.2f}"
                    f" - {r['measured_max_us']:.2f}, {r['repetitions']}) | {r['predicted_us']:.2f} | {r['ratio']:.2f} "
                    f"| {r['algo']} {r['proto']} | {r['latency_us']:.2f} |")
            b = old.get((label, r["collective"], r["size_bytes"]))
            if old:
                line += f" {b:.2f} | {b / r['measured_us']:.2f} |" if b else " | |"
            lines.append(line)
        lines += ["", "</details>", ""]
    return lines


def read_csv(path):
    with open_text(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["ratio"] = float(r["ratio"])
        r["size_bytes"] = int(r["size_bytes"])
    return rows


def write_readme(path, args, rows, commands, before_rows):
    summary = by_regime(rows)
    before = by_regime(before_rows) if before_rows else None
    lines = ["# The collective model against the 2 x H200 sweeps", "",
             "Written by `launch/collective_latency.py` (its docstring says how measured and predicted times are "
             "taken); do not edit by hand. Re-run:", "", "```",
             "launch/collective_latency.py --commscale build/src/commscale"
             + (f" --measured {shown(args.measured)}" if shown(args.measured) != shown(DEFAULT_MEASURED) else "")
             + (f" --before {shown(args.before)}" if args.before else ""), "```", "",
             "Predictions:", "", "```", *commands, "```", "",
             "What the model is, what changed in it and why, and the predictions of the README's examples before and "
             "after: [NOTES.md](NOTES.md).", "",
             "## Error by path class and size regime", "",
             "Ratio = predicted / measured; small <= 64 KiB < mid <= 64 MiB < large.", ""]
    lines += table_md(summary, before) + [""]
    lines += ["## Error by collective and size regime", ""] + per_collective_md(rows, before_rows) + [""]
    lines += ["## The measured terms, derived from the same files", ""] + derivations(args.measured) + [""]
    lines += ["## Every point", ""] + full_md(rows, before_rows or [])
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return summary


def check(summary):
    failed = []
    for key, s in summary.items():
        median_bound, worst_bound = BOUNDS[key]
        worst = abs(s["worst"]["ratio"] - 1) * 100
        if s["median_error"] > median_bound or worst > worst_bound:
            failed.append(f"{key[0]} {key[1]}: median |error| {s['median_error']:.0f}% (bound {median_bound}%), "
                          f"worst {worst:.0f}% (bound {worst_bound}%) at {worst_text(s)}")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commscale", required=True)
    parser.add_argument("--measured", default=DEFAULT_MEASURED)
    parser.add_argument("--out", default=os.path.join(ROOT, "results/collective-latency"))
    parser.add_argument("--before")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--expect")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, commands = compare(args.commscale, args.measured)
    if not rows:
        sys.exit(f"collective_latency.py: no measured sweep in {args.measured}")
    with open(os.path.join(args.out, "comparison.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    before_rows = read_csv(args.before) if args.before else None
    summary = write_readme(os.path.join(args.out, "README.md"), args, rows, commands, before_rows)
    for line in table_md(summary):
        print(line)
    failed = check(summary) if args.check else []
    for line in failed:
        print("outside the bounds: " + line, file=sys.stderr)
    if args.expect:
        failed += differences(args.out, args.expect)
    sys.exit(1 if failed else 0)


def differences(out, expect):
    """The files of OUT that differ from EXPECT's, with a unified diff of each on stderr."""
    differ = []
    for name in ("README.md", "comparison.csv"):
        with open(os.path.join(out, name)) as f:
            written = f.read().splitlines()
        with open_text(os.path.join(expect, name)) as f:  # README.md or README.md.gz (tests/data)
            committed = f.read().splitlines()
        if written != committed:
            differ.append(name)
            print(f"{name} differs from {expect}: re-run the command at the top of its README", file=sys.stderr)
            sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(
                committed, written, os.path.join(expect, name), os.path.join(out, name), lineterm="", n=1))
    return differ


if __name__ == "__main__":
    main()
