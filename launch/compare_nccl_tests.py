#!/usr/bin/env python3
"""Summarizes a directory written by launch/compare-nccl-tests.sh as markdown.

For every transport and collective it compares commscale with nccl-tests, both read from their text
tables (commscale prints nccl-tests' first 13 columns): bus bandwidth at 64 MiB and above (median
over repetitions, commscale / nccl-tests), and small-message time from 8 B to 4 KiB (median over the
alternating repetitions, commscale - nccl-tests, in microseconds).

usage: launch/compare_nccl_tests.py DIR > summary.md
"""

import glob
import os
import re
import statistics
import sys

ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+-?\d+\s+(.*)$")
LARGE = 64 << 20
SMALL = 4 << 10


def read_table(path):
    """{size: (oop_time_us, oop_busbw, ip_time_us, ip_busbw)} from one text output."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            rest = m.group(3).split()
            rows[int(m.group(1))] = (float(rest[0]), float(rest[2]), float(rest[4]), float(rest[6]))
    return rows


def medians(paths):
    """Per size, the median of each column over the files (repetitions)."""
    tables = [read_table(p) for p in paths]
    sizes = sorted(set().union(*[t.keys() for t in tables])) if tables else []
    out = {}
    for size in sizes:
        columns = list(zip(*[t[size] for t in tables if size in t]))
        out[size] = tuple(statistics.median(c) for c in columns)
    return out


def human(size):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            return f"{size / unit:g} {name}"
    return f"{size} B"


def files(directory, prefix):
    return sorted(glob.glob(os.path.join(directory, prefix + "-[0-9]*.txt")))


def main(directory):
    transports = sorted({os.path.basename(p).split("-")[1] for p in glob.glob(os.path.join(directory, "cs-*.txt"))})
    order = {"nvlink": 0, "p2p": 1, "sockets": 2}
    transports.sort(key=lambda t: order.get(t, 9))
    print("# commscale bench vs nccl-tests\n")
    machine = os.path.join(directory, "machine.txt")
    if os.path.exists(machine):
        print("```\n" + open(machine).read().strip() + "\n```\n")
    worst_ratio, worst_small = [], []
    for transport in transports:
        label = {"p2p": "p2p-off"}.get(transport, transport)
        collectives = sorted({re.sub(rf"^cs-{label}-(.*)-\d+\.txt$", r"\1", os.path.basename(p))
                              for p in glob.glob(os.path.join(directory, f"cs-{label}-*.txt"))})
        print(f"## {label}\n")
        print("Bus bandwidth at 64 MiB and above (GB/s, median of repetitions; ratio = commscale / nccl-tests):\n")
        print("| collective | size | commscale out | nccl-tests out | ratio | commscale in | nccl-tests in | ratio |")
        print("|---|---|---|---|---|---|---|---|")
        for c in collectives:
            cs, nt = medians(files(directory, f"cs-{label}-{c}")), medians(files(directory, f"nt-{label}-{c}"))
            for size in sorted(s for s in cs if s >= LARGE and s in nt):
                r_out = cs[size][1] / nt[size][1] if nt[size][1] else float("nan")
                r_in = cs[size][3] / nt[size][3] if nt[size][3] else float("nan")
                worst_ratio.append((min(r_out, r_in), label, c, size))
                print(f"| {c} | {human(size)} | {cs[size][1]:.1f} | {nt[size][1]:.1f} | {r_out:.3f} "
                      f"| {cs[size][3]:.1f} | {nt[size][3]:.1f} | {r_in:.3f} |")
        print("\nSmall messages (time in us, median of alternating repetitions; diff = commscale - nccl-tests):\n")
        print("| collective | size | commscale out | nccl-tests out | diff | commscale in | nccl-tests in | diff |")
        print("|---|---|---|---|---|---|---|---|")
        for c in collectives:
            cs = medians(files(directory, f"small-cs-{label}-{c}"))
            nt = medians(files(directory, f"small-nt-{label}-{c}"))
            for size in sorted(s for s in cs if s <= SMALL and s in nt):
                d_out, d_in = cs[size][0] - nt[size][0], cs[size][2] - nt[size][2]
                worst_small.append((max(d_out, d_in), label, c, size))
                print(f"| {c} | {human(size)} | {cs[size][0]:.2f} | {nt[size][0]:.2f} | {d_out:+.2f} "
                      f"| {cs[size][2]:.2f} | {nt[size][2]:.2f} | {d_in:+.2f} |")
        print()
    print("## Verdict\n")
    for label in dict.fromkeys(t for _, t, _, _ in worst_ratio):
        ratios = [w for w in worst_ratio if w[1] == label]
        smalls = [w for w in worst_small if w[1] == label]
        r = min(ratios)
        line = f"- {label}: lowest busbw ratio at >= 64 MiB {r[0]:.3f} ({r[2]}, {human(r[3])})"
        if smalls:
            s = max(smalls)
            line += f"; largest small-message excess {s[0]:+.2f} us ({s[2]}, {human(s[3])})"
        print(line)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
