#!/usr/bin/env bash
# What the Slurm tests share (sourced): checks that skip, munged, a slurm.conf for nodes of this
# machine, daemons that are always stopped, and waiting for nodes and jobs. slurm_setup sets `work`
# (the test's folder), `root` (the repository), `commscale` and `srun_mpi`. Expects set -euo pipefail.

# COMMSCALE_REQUIRE_SLURM=1 (tests/run.sh as root, i.e. CI) turns a skip into a failure.
skip() {
  if [ "${COMMSCALE_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "FAIL: COMMSCALE_REQUIRE_SLURM=1 but the Slurm test cannot run: $*" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# shellcheck disable=SC2034 # root and commscale are for the tests that source this
# slurm_setup COMMSCALE WORK_DIR: checks what the test needs (or skips), makes the folders, and
# arranges for the daemons to be stopped however the test ends.
slurm_setup() {
  commscale=$(realpath "$1")
  work="$2"
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  [ -x "$commscale" ] || fail "$commscale is not an executable"
  [ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root (run tests/run.sh as root, as CI does)"
  local tool
  for tool in munged slurmctld slurmd sbatch srun scontrol sinfo; do
    command -v "$tool" >/dev/null 2>&1 ||
      skip "$tool is not installed (launch/install-deps.sh test installs slurm-wlm, munge and libpmix-dev)"
  done
  rm -rf "$work"
  mkdir -p "$work/state" "$work/spool" "$work/munge"
  chmod 0700 "$work/munge"
  srun_mpi="${COMMSCALE_SRUN_MPI:-pmix}"
  daemon_pids=()
  trap slurm_on_exit EXIT
  trap 'exit 1' INT TERM
}

slurm_stop_daemons() {
  local pid
  for pid in "${daemon_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${daemon_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  daemon_pids=()
}

# A function a test names here (e.g. one deleting namespaces) runs after the daemons stop.
slurm_cleanup_hook=""
slurm_on_exit() {
  local rc=$? log
  slurm_stop_daemons
  if [ -n "$slurm_cleanup_hook" ]; then "$slurm_cleanup_hook"; fi
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] || continue
      echo "---- $log (last 30 lines)"
      tail -n 30 "$log"
    done
  fi
  exit "$rc"
}

# slurm_start_munge: munged with a fresh key and a socket of its own (a system munged is left alone).
slurm_start_munge() {
  dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$work/munge/munge.key"
  munge_socket="$work/munge/munge.socket"
  munged --foreground --force --key-file="$work/munge/munge.key" --socket="$munge_socket" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/munged.seed" &
  daemon_pids+=("$!")
  for _ in $(seq 50); do [ -S "$munge_socket" ] && break; sleep 0.1; done
  [ -S "$munge_socket" ] || fail "munged did not create its socket $munge_socket"
}

# slurm_write_conf CONTROLLER ADDRESS NODE:ADDRESS...: slurm.conf in the work folder (exported as
# SLURM_CONF), every node as slurmd -C measures this machine (CPUs, cores, memory), no cgroups, ports
# of our own; then checks srun has the --mpi plugin (or skips).
slurm_write_conf() {
  local controller="$1" address="$2" port=$((20000 + ($$ % 20000))) hardware node names=()
  shift 2
  hardware=$(slurmd -C | head -n 1 | sed 's/^NodeName=[^ ]* //')
  {
    echo "ClusterName=commscale-test"
    echo "SlurmctldHost=$controller($address)"
    echo "SlurmctldPort=$port"
    echo "SlurmdPort=$((port + 1))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$munge_socket"
    echo "StateSaveLocation=$work/state"
    echo "SlurmdSpoolDir=$work/spool/slurmd-%n"
    echo "SlurmctldPidFile=$work/slurmctld.pid"
    echo "SlurmdPidFile=$work/slurmd-%n.pid"
    echo "SlurmctldLogFile=$work/slurmctld.log"
    echo "SlurmdLogFile=$work/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=$srun_mpi"
    echo "ReturnToService=2"
    echo "SlurmctldTimeout=30"
    echo "SlurmdTimeout=30"
    for node in "$@"; do
      echo "NodeName=${node%%:*} NodeAddr=${node#*:} $hardware State=UNKNOWN"
      names+=("${node%%:*}")
      mkdir -p "$work/spool/slurmd-${node%%:*}"
    done
    echo "PartitionName=test Nodes=$(IFS=,; echo "${names[*]}") Default=YES MaxTime=10 State=UP"
  } > "$work/slurm.conf"
  # slurmd 22.05 initializes its cgroup plugin even with nothing to confine. On a cgroup v2 machine
  # without systemd (a container) it must not ask systemd over dbus for a scope, and makes the
  # hierarchy itself instead; cgroup v1 machines ignore this.
  printf '%s\n' "CgroupPlugin=autodetect" "IgnoreSystemdOnFailure=yes" > "$work/cgroup.conf"
  export SLURM_CONF="$work/slurm.conf"
  local plugins
  plugins=$(srun --mpi=list 2>&1 || true)
  grep -q "$srun_mpi" <<< "$plugins" || skip "srun has no --mpi=$srun_mpi plugin (srun --mpi=list: $plugins)"
  echo "slurm: srun --mpi=list: $(tr '\n' ' ' <<< "$plugins")"
}

# slurm_wait_idle [PREFIX...] -- NODE...: waits (60 s at most) until every node is idle, asking sinfo
# through PREFIX (e.g. nsenter into a namespace; nothing on this machine's own network).
slurm_wait_idle() {
  local prefix=() state=""
  while [ "$1" != -- ]; do prefix+=("$1"); shift; done
  shift
  for _ in $(seq 120); do
    state=$("${prefix[@]}" sinfo -h -n "$(IFS=,; echo "$*")" -o %t 2>/dev/null | sort -u | tr '\n' ' ' || true)
    if [ "$state" = "idle " ]; then
      echo "slurm: nodes $* idle"
      return 0
    fi
    sleep 0.5
  done
  fail "nodes $* are not idle after 60 s (states: '${state:-no answer}')"
}

# slurm_wait_job [PREFIX...] -- JOB OUTPUT: waits for JOB to end (5 min at most), shows its output on
# stderr, prints its final state.
slurm_wait_job() {
  local prefix=() state=""
  while [ "$1" != -- ]; do prefix+=("$1"); shift; done
  shift
  for _ in $(seq 300); do
    state=$("${prefix[@]}" scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) break ;; esac
    sleep 1
  done
  {
    echo "---- job $1: $state; its output ($2):"
    cat "$2" 2>/dev/null || true
    echo "----"
  } >&2
  echo "$state"
}
