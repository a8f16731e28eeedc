#!/bin/bash
# Compiler/linker launcher: records "user sys wall output" of each command to $TIMEWRAP_LOG.
out=unknown
prev=
for a in "$@"; do if [ "$prev" = -o ]; then out=$a; fi; prev=$a; done
exec /usr/bin/time -a -o "${TIMEWRAP_LOG:-$M/times.log}" -f "%U %S %e $out" "$@"
