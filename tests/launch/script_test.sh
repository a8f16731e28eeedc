# Sourced by the end-to-end tests of launch/ scripts (usage of each: TEST COMMSCALE WORK_DIR): sets `root`
# (the repository), `commscale` and `work` (emptied and created), and `fail` (message, exit 1).
# shellcheck shell=bash disable=SC2034 # root, commscale and work are for the script that sources this
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
commscale="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
