#!/usr/bin/env bash
# launch/regime-grid-device.sh (results/h200x1-2026-12-02b's run-2) --dry-run on the CPU machine, on the
# fixtures' copies of its points and of the profile it takes: the GPU script's steps in order, every line
# marked as a dry run, calibrate refusing without a GPU (exit 2), every train run's flags accepted by
# `commscale plan`, the first of each run list trained on the CPU backend (at PyTorch's host costs too),
# the PyTorch grid listed, the table printed and one archive written.
#
# usage: tests/launch/run2_dry.sh COMMSCALE WORK_DIR
set -euo pipefail

# shellcheck source=tests/launch/script_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_test.sh"

cd "$root"
OUT="$work/out" COMMSCALE_BIN="$commscale" POINTS=tests/data/results/h200x1-2026-12-02b/points.jsonl \
  DRY_PROFILE=tests/data/results/h200x1-2026-12-01b/calibration/cal-heat20.json \
  bash launch/regime-grid-device.sh --dry-run > "$work/log.txt" 2>&1 ||
  fail "regime-grid-device.sh --dry-run exited $?: $(tail -20 "$work/log.txt")"
log=$(cat "$work/log.txt")
echo "$log" | tail -30

want() { grep -qF -- "$1" <<< "$log" || fail "no line with '$1' in the dry run's output"; }
want "DRY RUN on "
want "DRY RUN calibrate rc=2"
want "calibrate measures GPUs (host costs and interference are measured on the GPU's"
want "DRY RUN pytorch_kernels rc=0"
want "DRY RUN: pytorch_host.py needs a GPU"
for profile in cal.json cal-eager.json cal-full.json; do want "DRY RUN predict --calibration $profile: rc=0"; done
want "DRY RUN q05-s512-mb1-flash: commscale plan accepts its flags"
want "DRY RUN l70-s2048-mb1-flash: commscale plan accepts its flags"
want "train-DRYRUN-q05-s512-mb1-flash: rc 0"
want "hostfw-DRYRUN-q05-s512-mb1-flash: rc 0"
want "DRY RUN pytorch_reference --dry-run rc=0: 19 points listed, none run"
want "DRY RUN pytorch_kernels --arch llama rc=0"
if grep -q "REFUSES" <<< "$log"; then fail "commscale plan refused a run's flags"; fi
# Every timestamped line says it is a dry run.
if grep -E '^\[[0-9]+s\]' <<< "$log"; then fail "a step line without DRY RUN"; fi
[ -s "$work/out/h200x1-run-2.tgz" ] || fail "no archive in OUT"
tar xzf "$work/out/h200x1-run-2.tgz" -C "$work"
grep -q "^DRY RUN on " "$work/run2/machine.txt" || fail "machine.txt does not say it is a dry run"
# The reduced CPU runs: the host-framework one at the fixture's costs, said so in its JSON.
python3 - "$work/run2/train" <<'PY'
import json, sys
d = sys.argv[1]
plain = json.load(open(f"{d}/train-DRYRUN-q05-s512-mb1-flash.json"))
paced = json.load(open(f"{d}/hostfw-DRYRUN-q05-s512-mb1-flash.json"))
assert plain["config"]["host_framework"] is None, plain["config"]["host_framework"]
host = paced["config"]["host_framework"]
assert host["framework"] == "pytorch-eager" and "DRY RUN fixture" in host["source"], host
assert "--kernels eager" in paced["context"]["command_line"], paced["context"]["command_line"]
PY
echo "run2_dry: ok"
