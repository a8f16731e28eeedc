#!/usr/bin/env bash
# What the tests on network-namespace nodes share (sourced): skip and fail, and the checks and
# folders every one starts with. Expects set -euo pipefail.

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# shellcheck disable=SC2034 # commscale, here and root are for the tests that source this
# netns_setup COMMSCALE WORK_DIR TOOL...: sets `commscale` (absolute), `work`, `here` (this folder) and
# `root` (the repository); skips without root or one of the TOOLs; empties WORK_DIR.
netns_setup() {
  commscale=$(realpath "$1")
  work="$2"
  shift 2
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  root=$(cd "$here/../.." && pwd)
  [ "$(id -u)" = 0 ] || skip "network and UTS namespaces need root"
  local tool
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"; done
  rm -rf "$work"
  mkdir -p "$work"
}
