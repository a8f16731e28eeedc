#!/usr/bin/env python3
"""Reads the bandwidth each collective got inside `commscale train` steps against `commscale bench`.

For every `train -J` file given, takes its `comm_rates` rows (the collectives of groups as large as the
job, and the pipeline transfers as sendrecv), runs `commscale bench` at exactly those sizes and types
under the same transport (the NCCL variables the train run recorded) and job size, and writes OUT.csv
and OUT.md: in-step busbw, bench busbw (from its median iteration, as the in-step figure is a median of
single calls; the loop's figure beside it), their ratio.

usage: launch/instep_vs_bench.py --commscale BIN --out PREFIX [--mpirun "mpirun --bind-to none"] TRAIN_JSON...
"""

import argparse
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile


def bench_busbw(args, world, backend, env_vars, call, size, dtype):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        command = shlex.split(args.mpirun) + ["-np", str(world)]
        for key in env_vars:
            command += ["-x", key]
        command += [args.commscale, "bench", "--backend", backend, call, "-b", str(size), "-e", str(size), "-d", dtype, "-n", "50",
                    "-w", "10", "-J", path]
        result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env_vars})
        if result.returncode != 0:
            sys.exit(f"bench failed: {shlex.join(command)}\n{result.stderr}")
        with open(path) as f:
            placement = json.load(f)["results"][0]["out_of_place"]
        # The in-step figure is a median of single calls: read it against bench's median iteration
        # (its per-iteration samples), and keep the loop's figure (nccl-tests' time) beside it.
        ratio = placement["time_us"] / placement["samples"]["median_us"]
        return placement["busbw_GBps"] * ratio, placement["busbw_GBps"], shlex.join(command)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commscale", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", default="mpirun --bind-to none")
    parser.add_argument("trains", nargs="+")
    args = parser.parse_args()
    rows = []
    for path in args.trains:
        with open(path) as f:
            doc = json.load(f)
        world = len(doc["context"]["ranks"])
        env_vars = {k: v for k, v in doc["context"].get("environment", {}).items() if k.startswith("NCCL_")}
        dtype = doc["model"].get("dtype", "bf16")
        for rate in doc.get("comm_rates", []):
            if rate["ranks"] != world:
                continue  # bench runs one group over the whole job
            busbw, loop_busbw, command = bench_busbw(args, world, doc["context"]["backend"], env_vars, "sendrecv" if rate["call"] == "send_recv" else rate["call"],
                                         rate["size_bytes"], dtype)
            rows.append({"train": os.path.basename(path), "group": rate["group"], "call": rate["call"],
                         "size_bytes": rate["size_bytes"], "in_step_busbw_GBps": rate["busbw_GBps"],
                         "bench_busbw_GBps": busbw, "bench_loop_busbw_GBps": loop_busbw,
                         "ratio": rate["busbw_GBps"] / busbw if busbw else None,
                         "env": " ".join(f"{k}={v}" for k, v in env_vars.items()), "bench_command": command})
    if not rows:
        sys.exit("no collective of a group as large as the job in these train files")
    with open(args.out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    with open(args.out + ".md", "w") as f:
        f.write("| train | group | call | size | in step GB/s | bench GB/s | ratio |\n|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['train']} | {r['group']} | {r['call']} | {r['size_bytes']} | {r['in_step_busbw_GBps']:.1f} "
                    f"| {r['bench_busbw_GBps']:.1f} | {r['ratio']:.3f} |\n")
        f.write(f"\nmedian ratio {statistics.median(ratios):.3f}, lowest {min(ratios):.3f}, "
                f"{sum(abs(r - 1) <= 0.05 for r in ratios)} of {len(ratios)} within 5%\n")
    print(f"in-step busbw / bench busbw: median {statistics.median(ratios):.3f}, lowest {min(ratios):.3f}")


if __name__ == "__main__":
    main()
