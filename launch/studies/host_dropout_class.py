#!/usr/bin/env python3
"""Offline (no GPU): one alternative host fit for eager PyTorch, checked on run-19's medians. The SDPA
calls of the GPT stack (dropout 0.1) are a class of their own beside those of the Llama stack and the
SDPA chain (no dropout): per phase, a least-squares fit over pytorch_host.py's five stacks of gemm,
kernel, attention and attention-with-dropout launches (launch/host_fit.py's solver). The GPT profile
then charges its attention calls the dropout figure, the Llama profile the other (predict_accuracy.py
takes one profile per architecture), and the runs are predicted with them.

    python3 launch/studies/host_dropout_class.py DETAILS BASE_GPT BASE_LLAMA OUT_GPT OUT_LLAMA
    # DETAILS: host_rounds.py's host-median-*.json; then launch/predict_accuracy.py with OUT_GPT and OUT_LLAMA
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from host_fit import largest_residual, least_squares  # noqa: E402
from pytorch_host import CHAIN, PHASES, host_rows  # noqa: E402
from study_files import open_data  # noqa: E402

COLUMNS = ("gemm", "kernel", "attention", "attention_dropout")


def fit(details):
    fits = {}
    for phase in PHASES:
        rows = []
        for s in details["stacks"]:
            launches = s["launches"][phase]
            dropout = s["arch"] == "gpt"
            counts = {"gemm": launches.get("gemm", 0), "kernel": launches.get("kernel", 0),
                      "attention": 0 if dropout else launches.get("attention", 0),
                      "attention_dropout": launches.get("attention", 0) if dropout else 0}
            if sum(counts.values()):
                rows.append((s["host_s_free"][phase] - launches.get("collective", 0) * details["collective_host_s"],
                             counts))
        ys = [y for y, _ in rows]
        used = [c for c in COLUMNS if any(counts[c] for _, counts in rows)]
        columns = [[counts[c] for _, counts in rows] for c in used]
        costs = least_squares(columns, ys)
        if costs is None:
            sys.exit(f"host_dropout_class.py: phase {phase}: the fit is unstable or negative")
        figures = dict(zip(used, costs))
        for c in COLUMNS:  # a class the phase never launched: the phase's first figure
            figures.setdefault(c, figures.get("attention") or figures.get("gemm") or costs[0])
        fits[phase] = figures
        print(f"{phase}: " + ", ".join(f"{c} {figures[c] * 1e6:.1f} us" for c in COLUMNS) +
              f"; largest residual {100 * largest_residual(columns, costs, ys):.1f}%")
    return fits


def main():
    details_path, base_gpt, base_llama, out_gpt, out_llama = sys.argv[1:6]
    details = json.load(open_data(details_path))
    fits = fit(details)
    step_s = max(0.0, statistics.median(s["host_s_free"]["other"] for s in details["stacks"] if s["arch"] != CHAIN))
    for base, out, attention in ((base_gpt, out_gpt, "attention_dropout"), (base_llama, out_llama, "attention")):
        figures = {p: {"gemm": fits[p]["gemm"], "kernel": fits[p]["kernel"], "attention": fits[p][attention],
                       "fit": f"host_dropout_class.py ({attention})"} for p in PHASES}
        profile = json.load(open_data(base))
        rows = host_rows(figures, step_s, details["collective_host_s"],
                         f"host_dropout_class.py over {details_path}: SDPA calls with dropout a class of their own")
        profile["host"] = [r for r in profile.get("host", []) if r["framework"] not in {x["framework"] for x in rows}] + rows
        with open(out, "w") as f:
            json.dump(profile, f, indent=1)


if __name__ == "__main__":
    main()
