#!/usr/bin/env bash
# launch/mpirun.sh's command lines (--dry-run, no ranks started): ranks per node and nodes, binding,
# PML, root allowance, variables passed with -x; and its refusals (exit 2, naming the option).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
wrapper="$root/launch/mpirun.sh"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# line ARGS...: the mpirun command line the wrapper prints for ARGS.
line() { "$wrapper" --dry-run "$@" 2>&1 | sed -n 's/^mpirun.sh: mpirun /mpirun /p'; }
expect() {
  local got="$1" want="$2"
  case "$got" in *"$want"*) ;; *) fail "expected '$want' in: $got" ;; esac
}
expect_not() {
  case "$1" in *"$2"*) fail "did not expect '$2' in: $1" ;; esac
}

got=$(env -u COMMSCALE_RANKS_PER_NODE NCCL_IB_HCA=mlx5_0 UCX_TLS=rc COMMSCALE_X=1 OTHER_VAR=1 \
  "$wrapper" --dry-run --per-node 4 bench all_reduce 2>&1)
expect "$got" "mpirun -np 4 --map-by ppr:4:node --bind-to none"
expect "$got" "-x NCCL_IB_HCA"
expect "$got" "-x UCX_TLS"
expect "$got" "-x COMMSCALE_X"
expect_not "$got" "OTHER_VAR"
expect_not "$got" "--mca pml"
expect "$got" "bench all_reduce"
if [ "$(id -u)" = 0 ]; then expect "$got" "--allow-run-as-root"; else expect_not "$got" "--allow-run-as-root"; fi

got=$(line --hosts n1,n2,n3 --per-node 8 --bind numa --pml ob1 train --tp 8)
expect "$got" "mpirun -np 24 --map-by ppr:8:node --host n1:8,n2:8,n3:8 --bind-to numa --mca pml ob1"
expect "$got" "train --tp 8"
printf 'n1 slots=8\n# a comment\n\nn2 slots=8\n' > "${TMPDIR:-/tmp}/commscale-hostfile.$$"
got=$(line --hostfile "${TMPDIR:-/tmp}/commscale-hostfile.$$" --per-node 2 bench all)
rm -f "${TMPDIR:-/tmp}/commscale-hostfile.$$"
expect "$got" "mpirun -np 4 --map-by ppr:2:node --hostfile"
got=$(line --pml ucx bench all)
expect "$got" "--mca pml ucx"

for bad in "--pml psm" "--bind cores" "--per-node 0" "--per-node x" "--frobnicate"; do
  read -r -a args <<< "$bad"
  rc=0
  message=$("$wrapper" --dry-run "${args[@]}" bench all 2>&1) || rc=$?
  [ "$rc" = 2 ] || fail "$bad: exit $rc, expected 2"
  expect "$message" "mpirun.sh: "
  expect "$message" "${args[0]}"
done
rc=0
message=$("$wrapper" --dry-run --hosts 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "--hosts without a value: exit $rc, expected 2"
expect "$message" "--hosts needs a value"
rc=0
message=$("$wrapper" --dry-run 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "no command: exit $rc, expected 2"
expect "$message" "no commscale command given"
echo "PASS: launch/mpirun.sh command lines and refusals"
