#!/usr/bin/env python3
"""A profile's clock curve taken against the grid's row of its GEMM, from the same calibrate run's
printed loop times: what `calibrate --measure clock` writes since 90a1568 (the runs of this
folder wrote it against the GEMM back to back, run-15, or against a row timed again after the memory
rows, run-16). No GPU; the loop times and the row are the run's own.

    python3 launch/studies/clock_against_row.py run-16/calibrate.txt run-16/cal.json run-16/cal-clock-against-row.json

(run-N: results/h200x1-2026-12-03c/run-N; inputs read as FILE or FILE.gz.)
"""
import json
import re
import sys

from study_files import open_data


def main(text_path, profile_path, out_path):
    text = open_data(text_path).read()
    row = float(re.search(r"^gemm\s+bf16\s+2048 x\s+8192 x\s+2048 x\s+1\s+([\d.]+) us", text, re.M).group(1))
    loops = [float(t) for t in re.findall(r"^clock\s+bf16 2048 x 8192 x 2048\s+\d+% of the time\s+([\d.]+) us", text, re.M)]
    profile = json.load(open_data(profile_path))
    points = profile["clock"]["points"]
    if len(points) != len(loops):
        sys.exit(f"{text_path}: {len(loops)} loop times for {len(points)} points")
    for point, t in zip(points, loops):
        point["speedup"] = round(row / t, 4)
    profile["clock"]["source"] += f"; re-expressed against the grid's row ({row} us) by clock_against_row.py"
    json.dump(profile, open(out_path, "w"), indent=1)
    print(f"{out_path}: " + ", ".join(f"{p['gemm_share']}: {p['speedup']}" for p in points))


if __name__ == "__main__":
    main(*sys.argv[1:4])
