#!/usr/bin/env bash
# Open MPI's launch agent (plm_rsh_agent) for "nodes" that are network namespaces of this machine:
# where mpirun would ssh HOST COMMAND, this enters the namespace COMMSCALE_NETNS_PREFIX + HOST with a
# host name of its own (a UTS namespace) and runs COMMAND there, as sshd would run it in a shell.
#
# usage (by mpirun): netns_agent.sh HOST COMMAND...
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 HOST COMMAND..." >&2
  exit 2
fi
host="$1"
shift
# sshd hands the remote command, its words joined by spaces, to the user's shell: so does this.
# shellcheck disable=SC2016 # expanded by the inner bash
exec ip netns exec "${COMMSCALE_NETNS_PREFIX:?set by the test}$host" \
  unshare --uts bash -c 'hostname "$1" && exec bash -c "$2"' netns-agent "$host" "$*"
