#!/usr/bin/env bash
# Accepted extremes under memory and time limits (issue 19): the largest sizes the flags accept must
# either finish or be refused up front (exit code 2, one message saying why), never run for minutes
# or take all the memory. Each command runs under `ulimit -v` and `timeout`.
#
#   accepted_extremes.sh COMMSCALE WORK_DIR
set -euo pipefail
COMMSCALE=$1
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
memory_kib=$((4 * 1024 * 1024))  # 4 GiB of address space
limit_s=60

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect NAME CODES SECONDS PATTERN COMMAND...: runs the command under the limits; its exit code must
# be one of CODES (a space-separated list), it must end within SECONDS, and where it exits 2 its
# stderr must match PATTERN (grep -E) in one "commscale:" line.
expect() {
  local name=$1 codes=$2 seconds=$3 pattern=$4
  shift 4
  local start=$SECONDS rc=0
  (ulimit -v "$memory_kib" && exec timeout "$limit_s" "$COMMSCALE" "$@") > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  local took=$((SECONDS - start))
  echo "$name: exit code $rc after $took s"
  head -c 600 "$WORK/$name.err"
  case " $codes " in *" $rc "*) ;; *) fail "$name: exit code $rc, expected one of: $codes" ;; esac
  [ "$took" -le "$seconds" ] || fail "$name: took $took s, more than $seconds s"
  if [ "$rc" -eq 2 ]; then
    grep -Eq -e "$pattern" "$WORK/$name.err" || fail "$name: no message matching: $pattern"
    [ "$(grep -c '^commscale: ' "$WORK/$name.err")" -eq 1 ] || fail "$name: not exactly one message"
  fi
}

big=(--cluster hgx-h100 --model gpt3-175b --tp 8 --pp 16 --dp 4096 --global-batch 4096)
# 65,536 nodes of 8 H100s, every GPU a rank: too large a step program to build, said before building.
expect predict-65536-nodes 2 10 "--dp/--tp/--pp: dp 4096 x tp 8 x pp 16: the step program of 524288 ranks" \
  predict "${big[@]}" --nodes 65536
expect plan-65536-nodes 2 10 "--dp/--tp/--pp: dp 4096 x tp 8 x pp 16" \
  plan --model gpt3-175b --tp 8 --pp 16 --dp 4096 --global-batch 4096
# search at 65,536 nodes: the stage model's search would run for many minutes; refused up front.
expect search-65536-nodes 2 10 "--nodes: 524288 GPUs of hgx-h100 to search \\(expected at most 65536 GPUs" \
  search --cluster hgx-h100 --model gpt3-175b --global-batch 4096 --nodes 65536
# 8,192 nodes, 65,536 ranks: the full simulation finishes (it took 417 s and 7.9 GB before the cost
# model stopped finding the paths of all-to-alls that no op runs).
expect predict-8192-nodes "0 1" "$limit_s" "" \
  predict --cluster hgx-h100 --model gpt3-175b --tp 8 --pp 16 --dp 512 --global-batch 4096 --nodes 8192
echo "PASS"
