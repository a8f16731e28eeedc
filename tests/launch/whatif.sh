#!/usr/bin/env bash
# launch/whatif.sh end to end: with a commscale that has predict and compare, a small study over two
# clusters writes every file it promises; with one that lacks them, it stops at once with exit 2 and
# a message naming the missing command.
#
# usage: tests/launch/whatif.sh COMMSCALE WORK_DIR
set -euo pipefail

# shellcheck source=tests/launch/script_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_test.sh"

rc=0
"$root/launch/whatif.sh" --commscale "$commscale" --out "$work/out" --model tiny --global-batch 8 \
  --clusters hgx-h100,rtx4090-8x-roce100 -- --tp 2 --pp 2 > "$work/log" 2>&1 || rc=$?
cat "$work/log"
if ! "$commscale" --help | grep -Eq '^ +predict( |$)'; then
  [ "$rc" = 2 ] || fail "exit $rc without a predict command, expected 2"
  grep -q "has no 'predict' command" "$work/log" || fail "no message naming the missing predict command"
  [ ! -e "$work/out" ] || fail "results written although predict is missing"
  echo "PASS: this commscale has no predict: whatif.sh said so and stopped (exit 2)"
  exit 0
fi
[ "$rc" = 0 ] || fail "whatif.sh exited with $rc"
for file in commands.txt compare.txt compare.json predict-hgx-h100.txt predict-hgx-h100.json \
  predict-rtx4090-8x-roce100.txt predict-rtx4090-8x-roce100.json; do
  [ -s "$work/out/$file" ] || fail "$work/out/$file is missing or empty"
done
grep -q "^step " "$work/out/predict-hgx-h100.txt" || fail "predict-hgx-h100.txt has no step line"
echo "PASS: whatif.sh predicted on 2 clusters and compared them"
