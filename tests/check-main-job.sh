#!/usr/bin/env bash
# Checks what one run of launch/main.sh left: usage: tests/check-main-job.sh RESULTS_DIR [MAIN_LOG]
#   - every file launch/README.md lists for `<host>-<date>/`: unconditional rows must all exist; a
#     row whose "written by" column says when it applies (parentheses) must exist whole or not at
#     all, and the "GPUs only" rows must exist where bench ran on GPUs;
#   - report.html is a page of drawn charts, bench.json is complete and passed;
#   - with MAIN_LOG (main.sh's stdout), the last line names RESULTS_DIR, and a prediction the log
#     announces was written.
# Exit 0 when all hold; otherwise 1, naming each problem.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="${1:?usage: check-main-job.sh RESULTS_DIR [MAIN_LOG]}"
main_log="${2:-}"
problems=0
problem() { echo "check-main-job: $*" >&2; problems=$((problems + 1)); }

[ -d "$out" ] || { problem "$out is not a folder"; exit 1; }
on_gpus=0
if grep -q '"backend": "gpu"' "$out/bench.json" 2>/dev/null; then on_gpus=1; fi

# The table of launch/README.md's `<host>-<date>/` section: "| `a`, `b` | written by | what |".
# shellcheck disable=SC2016 # backquotes are the markdown, not a command
rows=$(sed -n '/^## `<host>-<date>\/`/,/^## /p' "$root/launch/README.md" | grep '^| `' || true)
[ -n "$rows" ] || problem "launch/README.md has no table of main.sh's files"
while IFS= read -r row; do
  files_cell=$(printf '%s\n' "$row" | cut -d'|' -f2)
  written_by=$(printf '%s\n' "$row" | cut -d'|' -f3)
  # shellcheck disable=SC2016
  mapfile -t files < <(printf '%s\n' "$files_cell" | grep -o '`[^`]*`' | tr -d '`')
  present=0
  for f in "${files[@]}"; do if [ -s "$out/$f" ]; then present=$((present + 1)); fi; done
  required=1
  case "$written_by" in *"GPUs only"*) required=$on_gpus ;; *"("*) required=0 ;; esac
  if [ "$required" = 1 ] && [ "$present" -ne "${#files[@]}" ]; then
    problem "missing or empty, though launch/README.md lists them: ${files[*]} (found $present of ${#files[@]})"
  elif [ "$present" -ne 0 ] && [ "$present" -ne "${#files[@]}" ]; then
    problem "only $present of ${files[*]} written (a row of launch/README.md is written whole or not at all)"
  fi
done <<<"$rows"

if [ -s "$out/report.html" ]; then
  grep -q '<svg class="chart"' "$out/report.html" || problem "report.html has no chart"
  grep -q '</html>' "$out/report.html" || problem "report.html is cut short"
else
  problem "no report.html in $out"
fi
grep -q '"complete": true' "$out/bench.json" 2>/dev/null || problem "bench.json is not complete"
grep -q '"passed": true' "$out/bench.json" 2>/dev/null || problem "bench.json did not pass"

if [ -n "$main_log" ]; then
  last=$(grep '^commscale: results in ' "$main_log" | tail -n 1 || true)
  case "$last" in
    "commscale: results in $out "*) ;;
    *) problem "main.sh's log does not end by naming $out (\"$last\")" ;;
  esac
  if grep -q '^commscale: .*/commscale predict ' "$main_log" && [ ! -s "$out/predict.json" ]; then
    problem "main.sh announced a prediction but wrote no predict.json"
  fi
fi

if [ "$problems" -gt 0 ]; then
  echo "check-main-job: $problems problem(s) in $out" >&2
  exit 1
fi
echo "check-main-job: $out has every file launch/README.md lists for this machine, and a report"
