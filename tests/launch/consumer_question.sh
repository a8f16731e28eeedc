#!/usr/bin/env bash
# launch/consumer-question.sh end to end: it writes both comparisons and the TP table the README quotes,
# and the table still says what the README says of it: on PCIe without P2P, TP 2 over two RTX 4090s is
# no faster than one GPU for a 125M model, while over an NVLink pair of RTX 3090s it is. Bad usage: exit 2.
#
# usage: tests/launch/consumer_question.sh COMMSCALE WORK_DIR
set -euo pipefail

# shellcheck source=tests/launch/script_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_test.sh"

rc=0
"$root/launch/consumer-question.sh" --commscale "$commscale" --bogus >"$work/usage.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown argument exited with $rc, expected 2"
grep -q 'unknown argument "--bogus"' "$work/usage.log" || fail "no message naming the unknown argument"

"$root/launch/consumer-question.sh" --commscale "$commscale" --out "$work/out"
for file in commands.txt compare-gpt3-1.3b.txt compare-gpt3-1.3b.json compare-llama2-7b.txt compare-llama2-7b.json \
  tp-on-pcie.md; do
  [ -s "$work/out/$file" ] || fail "$work/out/$file is missing or empty"
done
for model in gpt3-1.3b llama2-7b; do
  entries=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["clusters"]))' \
    "$work/out/compare-$model.json")
  [ "$entries" = 8 ] || fail "compare-$model.json has $entries clusters, expected 8"
done
rows=$(grep -c '^| rtx' "$work/out/tp-on-pcie.md")
[ "$rows" = 12 ] || fail "tp-on-pcie.md has $rows rows, expected 12"
# FP8 where the GPU has it: the A100 node's plan in bf16, the RTX 4090 box's in FP8 and faster than in bf16.
python3 - "$work/out/compare-llama2-7b-fp8.json" "$work/out/compare-llama2-7b.json" <<'EOF' || fail "the FP8 comparison"
import json, sys
fp8, bf16 = (json.load(open(f))["clusters"] for f in sys.argv[1:])
by = lambda entries: {e["label"]: e for e in entries}
fp8, bf16 = by(fp8), by(bf16)
assert "fp8" not in fp8["hgx-a100"]["best"]["plan"], "the A100 node's plan has fp8"
assert any("no FP8 tensor cores" in n for n in fp8["hgx-a100"]["notes"]), "no note on the A100's bf16"
assert fp8["rtx4090-8x-pcie"]["best"]["plan"]["fp8"] == "delayed", "the 4090 box's plan is not FP8"
tokens = lambda e: e["best"]["summary"]["tokens_per_s"]
faster = tokens(fp8["rtx4090-8x-pcie"]) / tokens(bf16["rtx4090-8x-pcie"])
assert faster > 1.0, f"FP8 on the 4090 box: {faster:.2f}x bf16's tokens/s"
print(f"FP8 on the 4090 box: {faster:.2f}x bf16's tokens/s")
EOF
ratio() { awk -F'|' -v c=" $1 " -v m=" $2 " '$2 == c && $3 == m { gsub(/ /, "", $6); print $6 }' "$work/out/tp-on-pcie.md"; }
pcie=$(ratio rtx4090-8x-pcie gpt3-125m)
pairs=$(ratio rtx3090-4x-nvlink-pairs gpt3-125m)
awk -v r="$pcie" 'BEGIN { exit !(r <= 1.0) }' || fail "TP 2 / 1 GPU on PCIe without P2P at 125M is $pcie, not at most 1"
awk -v r="$pairs" 'BEGIN { exit !(r > 1.0) }' || fail "TP 2 / 1 GPU over an NVLink pair at 125M is $pairs, not above 1"
echo "PASS: consumer-question.sh wrote both comparisons and the TP table (125M: PCIe $pcie, NVLink pair $pairs)"
