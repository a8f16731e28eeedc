#!/usr/bin/env bash
# launch/kernel_categories.py end to end: a step predicted with eager kernels (its Chrome trace) against
# a PyTorch kernel profile written here, whose kernels and times are known: each category's sums on
# both sides, and an unknown kernel listed as "other".
#
# usage: tests/launch/kernel_categories.sh COMMSCALE WORK_DIR
set -euo pipefail

# shellcheck source=tests/launch/script_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_test.sh"

"$commscale" predict --cluster h200x1 --model tiny --kernels eager --trace "$work/trace.json" > "$work/predict.txt"
cat > "$work/profile.json" <<'JSON'
{"gpu_busy_us": 4500.0, "gpu_span_us": 5000.0, "kernel_launches": 4, "kernels": [
 {"kernel": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", "calls": 2, "gpu_us": 3000.0},
 {"kernel": "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16>", "calls": 1, "gpu_us": 1000.0},
 {"kernel": "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16>", "calls": 1, "gpu_us": 250.0},
 {"kernel": "some_kernel_nobody_knows", "calls": 1, "gpu_us": 250.0}]}
JSON
python3 "$root/launch/kernel_categories.py" "$work/profile.json" "$work/trace.json" > "$work/out.txt"
cat "$work/out.txt"

# The trace's sums, computed here from its events.
expected=$(python3 - "$work/trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
gemm = sum(e["dur"] for e in events if e.get("ph") == "X" and e.get("pid") == 0 and "gemm" in e.get("args", {}))
softmax = sum(e["dur"] for e in events if e.get("ph") == "X" and e.get("pid") == 0
              and e.get("args", {}).get("kernel") == "softmax")
print(f"{gemm * 1e-3:.2f} {softmax * 1e-3:.2f}")
PY
)
read -r gemm softmax <<< "$expected"
grep -Eq "^GEMM +3\.00 +$gemm " "$work/out.txt" || fail "GEMM row is not 3.00 ms against the trace's $gemm ms"
grep -Eq "^softmax +1\.00 +$softmax " "$work/out.txt" || fail "softmax row is not 1.00 ms against the trace's $softmax ms"
grep -Eq "^norm +0\.25 " "$work/out.txt" || fail "no norm row of 0.25 ms"
grep -q "^# other: 0.25 ms  some_kernel_nobody_knows" "$work/out.txt" || fail "the unknown kernel is not listed"
grep -Eq "^all +4\.50 " "$work/out.txt" || fail "PyTorch's total is not 4.50 ms"
echo "PASS: kernel_categories.py summed both sides by category"
