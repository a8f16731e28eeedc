#!/usr/bin/env python3
"""`commscale train` against `commscale predict` of the same flags: each pair's measured and predicted step and
the error (predicted / measured - 1; negative is optimistic), then the signed mean and the mean absolute error,
as topologies/validation.json records them for a GPU and framework. Pairs come from folders written by
launch/device-run.sh's device_run_train_predict (every NAME with train/NAME.json and predict/NAME.json) or are
given one by one.

    python3 launch/studies/train_against_predict.py \\
        --folder results/gpu1-2026-12-08-gemm-layout/call2-moe \\
        --pair results/gpu1-2026-12-08-gemm-layout/call1-layout/train/qwen1.5-moe-fp8.json \\
               results/gpu1-2026-12-08-gemm-layout/call1-layout/predict/qwen1.5-moe-fp8.json \\
        --pair results/gpu1-2026-12-08-main-job/main-job/main/train.json \\
               results/gpu1-2026-12-08-main-job/predict-h100x1.json
"""

import argparse
import json
import os
import statistics

from study_files import open_data


def step(path):
    return json.load(open_data(path))["summary"]["step_time_s"]


def pairs(args):
    for folder in args.folder or []:
        for name in sorted(os.listdir(os.path.join(folder, "train"))):
            if name.endswith(".json"):
                yield (os.path.join(folder, name[:-5]), os.path.join(folder, "train", name),
                       os.path.join(folder, "predict", name))
    for train, predict in args.pair or []:
        yield train, train, predict


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--folder", action="append", help="a folder with train/NAME.json and predict/NAME.json")
    p.add_argument("--pair", nargs=2, action="append", metavar=("TRAIN", "PREDICT"), help="one train and predict JSON")
    args = p.parse_args()
    errors = []
    print("| run | measured s | predicted s | error |")
    print("|---|---|---|---|")
    for label, train, predict in pairs(args):
        measured, predicted = step(train), step(predict)
        errors.append(100 * (predicted / measured - 1))
        print(f"| {label} | {measured:.4f} | {predicted:.4f} | {errors[-1]:+.1f}% |")
    if not errors:
        p.error("no pairs: give --folder or --pair")
    print(f"\n{len(errors)} runs: signed mean {statistics.mean(errors):+.1f}%, "
          f"MAPE {statistics.mean(abs(e) for e in errors):.1f}%")


if __name__ == "__main__":
    main()
