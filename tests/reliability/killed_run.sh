#!/usr/bin/env bash
# Nothing lost: a `bench` and a `train` run killed half way (SIGKILL to rank 0, the rank that writes)
# leave every completed row readable: each JSON Lines line is a whole record, and the -J file, rewritten
# atomically after every row (bench) or not yet written (train), is never half a file. Also checks the
# result files' permissions: created with the user's umask, never world-writable.
#
#   killed_run.sh COMMSCALE WORK_DIR MPIRUN [MPIRUN OPTION...]
set -euo pipefail
COMMSCALE=$1
WORK=$2
shift 2
MPIRUN=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/reliability/common.sh
. "$here/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# check_mode FILE EXPECTED: the permission bits, as stat prints them in octal.
check_mode() {
  local mode
  mode=$(stat -c %a "$1")
  [ "$mode" = "$2" ] || fail "$1 has mode $mode, expected $2"
}

# kill_half_way NAME ROW MIN_ROWS UMASK COMMAND...: runs the job under UMASK, SIGKILLs rank 0 once
# MIN_ROWS rows are in, and reads the files back.
kill_half_way() {
  local name=$1 row=$2 min_rows=$3 mask=$4
  shift 4
  local dir="$WORK/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  (umask "$mask" && exec "${MPIRUN[@]}" -np 2 "$COMMSCALE" "$@" -J "$dir/out.json" --jsonl "$dir/out.jsonl" \
     > "$dir/stdout" 2> "$dir/stderr") &
  local job=$!
  wait_for_lines "$dir/out.jsonl" $((min_rows + 1)) 120
  local pid
  pid=$(rank_pid 0) || fail "$name: no process for rank 0"
  kill -KILL "$pid"
  wait_gone "$job" 30 > /dev/null || exit 1
  wait "$job" || true
  cmake -DFILE="$dir/out.jsonl" -DMIN_ROWS="$min_rows" -DROW="$row" -P "$here/read_jsonl.cmake"
  if [ -f "$dir/out.json" ]; then
    cmake -DFILE="$dir/out.json" -P "$here/read_json.cmake"
  fi
  local f
  for f in "$dir"/out.json*; do
    case "$f" in *.tmp.*) continue ;; esac
    if [ "$mask" = 000 ]; then check_mode "$f" 664; else check_mode "$f" 600; fi
  done
  echo "$name: killed after $(grep -c "\"record\":\"$row\"" "$dir/out.jsonl") rows; files read back (umask $mask)"
}

kill_half_way bench row 3 000 bench all_reduce --backend cpu -b 4K -e 4M -i 4K -n 50 -w 1 -c 0
kill_half_way train step 3 077 train --backend cpu --model tiny --tp 2 --steps 10000 --warmup 0 --timing step
echo "killed_run: all cases passed"
