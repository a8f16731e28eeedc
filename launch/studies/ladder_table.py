#!/usr/bin/env python3
"""host_ladder.py's ladder.jsonl as a table: per stack, ladder stack and run, the host's time per step
(issue), per layer-microbatch and per kernel launch (the first round's profiled launches; an attention
call counts once), its step time and the GPU's busy time in the profiled step, each round's and their
median, and each round's spread against the median.

    python3 launch/studies/ladder_table.py W/ladder/ladder.jsonl
"""

import json
import statistics
import sys

from study_files import open_data


def launches(row):
    return sum(sum(v for k, v in c.items()) for c in row["launches"].values())


def main():
    rows = [json.loads(line) for line in open_data(sys.argv[1])]
    by_id, first = {}, {}
    for r in rows:
        if r["kind"] == "cpu":
            print(f"# cpu round {r['round']} {r['when']}: core {r['core']} at {r['core_mhz']} MHz, "
                  f"median {r['median_mhz']} MHz, load {r['load']}")
            continue
        by_id.setdefault((r["kind"], r["id"]), []).append(r)
        if "launches" in r:
            first[r["id"]] = r
    print("| kind | id | layer-mb | launches | GPU busy ms | step ms (median) | host ms per round | host ms (median) | "
          "per layer-mb ms | per launch us | host spread |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (kind, name), rs in by_id.items():
        s = rs[0].get("settings")
        layer_mb = s["layers"] * s["microbatches"] if s else (8 if kind == "stack" and "chain" not in name else None)
        host = [r["host_s"]["issue"] * 1e3 for r in rs]
        med = statistics.median(host)
        step = statistics.median(r["step_time_s"] * 1e3 for r in rs)
        f = first.get(name)
        n = launches(f) if f else None
        busy = f["gpu_busy_us_profiled_step"] / 1e3 if f else None
        spread = max(abs(h / med - 1) for h in host) * 100
        print(f"| {kind} | {name} | {layer_mb or '-'} | {n or '-'} | {busy:.1f} | {step:.1f} | "
              f"{' '.join(f'{h:.1f}' for h in host)} | {med:.1f} | "
              f"{(med / layer_mb) if layer_mb else float('nan'):.3f} | {(med * 1e3 / n) if n else float('nan'):.1f} | "
              f"{spread:.0f}% |")


if __name__ == "__main__":
    main()
