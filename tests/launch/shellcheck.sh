#!/usr/bin/env bash
# Runs shellcheck on every shell script of launch/ and tests/ (following sourced files); skipped (77)
# where shellcheck is not installed (launch/install-deps.sh test installs it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "SKIP: shellcheck is not installed (apt-get install shellcheck, or launch/install-deps.sh test)"
  exit 77
fi
cd "$root"
scripts=(launch/*.sh tests/*.sh tests/*/*.sh .ci/run)
shellcheck --version | sed -n 2p
shellcheck -x "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean: ${scripts[*]}"
