#!/usr/bin/env python3
"""launch/validate.py on two published rows: the measured step it derives from Megatron-LM's TFLOP/s (by hand
below), the predicted step it reads from commscale predict, the error and the regimes it files them under, the
coverage entry it writes; and a row without its measurement refused with exit 2 naming the key.

usage: validate_test.py COMMSCALE
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "launch", "validate.py")
ROWS = os.path.join(ROOT, "tests", "data", "validation", "two_rows.json")


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def main(commscale):
    with tempfile.TemporaryDirectory() as work:
        coverage = os.path.join(work, "coverage.json")
        run = subprocess.run([sys.executable, SCRIPT, "--commscale", commscale, "--rows", ROWS, "--out", work,
                              "--coverage", coverage], capture_output=True, text=True, check=False)
        check(run.returncode == 0, f"exit {run.returncode}: {run.stderr}")
        doc = json.load(open(os.path.join(work, "validation.json"), encoding="utf-8"))
        rows = {r["id"]: r for r in doc["rows"]}
        check(sorted(rows) == ["sc21-1.7b", "selseq-22b-full"], f"rows {sorted(rows)}")
        # 1.7B on 32 GPUs at 137 TFLOP/s: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) with B 512, s 2048, l 24,
        # h 2304, V 51200 is 96 x 512 x 2048 x 24 x 2304^2 x 1.20602 = 1.54668e16 FLOPs; / (137e12 x 32) = 3.5280 s.
        sc21 = rows["sc21-1.7b"]
        check(abs(sc21["measured_step_s"] - 3.5280) < 0.001, f"sc21 measured {sc21['measured_step_s']}")
        check(sc21["gpus"] == 32, f"sc21 GPUs {sc21['gpus']}")
        selseq = rows["selseq-22b-full"]
        check(selseq["measured_step_s"] == 1.42, f"selseq measured {selseq['measured_step_s']}")
        for r in rows.values():
            check(0 < r["predicted_step_s"] < 100, f"{r['id']} predicted {r['predicted_step_s']}")
            check(abs(r["error"] - (r["predicted_step_s"] / r["measured_step_s"] - 1)) < 1e-12, f"{r['id']} error")
            check("--framework megatron-lm" in r["command"], f"{r['id']} command {r['command']}")
        check("one node" in selseq["regimes"] and "several nodes" in sc21["regimes"], "node regimes")
        check("tp = 1" in sc21["regimes"] and "tp > 1" in selseq["regimes"], "tp regimes")
        whole = doc["regimes"]["all rows"]
        mean = 100 * (sc21["error"] + selseq["error"]) / 2
        check(whole["rows"] == 2 and abs(whole["signed_mean_pct"] - mean) < 1e-9, f"all rows {whole}")
        entries = json.load(open(coverage, encoding="utf-8"))["entries"]
        check(len(entries) == 1 and entries[0]["gpu"] == "a100-sxm4-80gb" and entries[0]["rows"] == 2,
              f"coverage {entries}")
        check("| all rows | 2 |" in run.stdout, "the printed table")

        bad = json.load(open(ROWS, encoding="utf-8"))
        del bad["rows"][1]["measured"]
        path = os.path.join(work, "bad.json")
        json.dump(bad, open(path, "w", encoding="utf-8"))
        run = subprocess.run([sys.executable, SCRIPT, "--commscale", commscale, "--rows", path],
                             capture_output=True, text=True, check=False)
        check(run.returncode == 2 and "rows[1].measured: is missing" in run.stderr, f"bad rows: {run.stderr}")
    print("validate.py: ok")


if __name__ == "__main__":
    main(sys.argv[1])
