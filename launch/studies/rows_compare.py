#!/usr/bin/env python3
"""calibrate's GEMM rows timed two ways on one machine (run-22): from an idle GPU, the calls issued back
to back (the old timing, `cal-idle.json`), and behind a spin (the new one, `cal.json`), row by row: the
ratio idle / queued by the idle row's time, the fastest rows of each dtype, and a profile with the idle
rows in place of the queued ones (everything else the queued profile's), for predictions side by side.

    python3 launch/studies/rows_compare.py run-22/cal-idle.json run-22/cal.json \\
        --merged run-22/cal-idle-rows.json > run-22/rows_compare.md
"""

import argparse
import json
import statistics

from study_files import open_data


def key(r):
    return (r["m"], r["n"], r["k"], r.get("batch", 1), r["dtype"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("idle")
    p.add_argument("queued")
    p.add_argument("--merged", help="write the queued profile with the idle GEMM rows here")
    args = p.parse_args()
    idle_doc, queued_doc = json.load(open_data(args.idle)), json.load(open_data(args.queued))
    idle = {key(r): r["seconds"] for r in idle_doc["gemm"]}
    queued = {key(r): r["seconds"] for r in queued_doc["gemm"]}
    common = [k for k in idle if k in queued]
    print(f"{len(common)} GEMM rows in both profiles; ratio = idle / queued time\n")
    print("| idle row's time | rows | median ratio | range |")
    print("|---|---|---|---|")
    for lo, hi in ((0, 10), (10, 20), (20, 50), (50, 200), (200, 1000), (1000, 1e9)):
        r = [idle[k] / queued[k] for k in common if lo <= idle[k] * 1e6 < hi]
        if r:
            span = f"{lo:.0f} us and over" if hi == 1e9 else f"{lo:.0f}-{hi:.0f} us"
            print(f"| {span} | {len(r)} | {statistics.median(r):.3f} | {min(r):.2f}-{max(r):.2f} |")
    print("\n| dtype | fastest 5 rows, idle (us) | fastest 5 rows, queued (us) |")
    print("|---|---|---|")
    for dtype in sorted({k[4] for k in common}):
        a = sorted(idle[k] for k in common if k[4] == dtype)[:5]
        b = sorted(queued[k] for k in common if k[4] == dtype)[:5]
        print(f"| {dtype} | {', '.join(f'{x * 1e6:.1f}' for x in a)} | {', '.join(f'{x * 1e6:.1f}' for x in b)} |")
    small = sorted((k for k in common if k[3] > 1 and k[4] == "bf16" and idle[k] < 12e-6), key=lambda k: k[:4])
    print("\n| batched bf16 rows under 12 us idle: m x n x k x batch | idle | queued |")
    print("|---|---|---|")
    for k in small:
        print(f"| {k[0]} x {k[1]} x {k[2]} x {k[3]} | {idle[k] * 1e6:.1f} | {queued[k] * 1e6:.1f} |")
    if args.merged:
        merged = dict(queued_doc)
        merged["gemm"] = idle_doc["gemm"]
        with open(args.merged, "w") as f:
            json.dump(merged, f, indent=1)


if __name__ == "__main__":
    main()
