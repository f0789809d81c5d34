#!/usr/bin/env bash
# `make mutation`: mutmut over the model modules listed in pyproject.toml [tool.mutmut].
# mutmut's batch run (workers forked from the process that ran the suite once)
# reports some mutants as surviving that their tests kill when the mutant is run
# on its own; every survivor of the batch is therefore run again by name, and
# the figure printed at the end is the one after that second pass.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
rm -rf mutants
if ! "$BIN/mutmut" run --max-children 2 > _build/mutation-run.log 2>&1 \
   || grep -q "failed to collect stats" _build/mutation-run.log; then
  tail -n 40 _build/mutation-run.log
  echo "mutation: mutmut could not run (the selected tests must pass unmutated)" >&2
  exit 1
fi
mapfile -t survivors < <("$BIN/mutmut" results 2>/dev/null | awk -F: '/: survived/ {gsub(/^ +/, "", $1); print $1}')
echo "mutation: ${#survivors[@]} survivors after the batch run; running each again on its own"
if ((${#survivors[@]})); then
  printf '%s\n' "${survivors[@]}" | xargs -n 40 "$BIN/mutmut" run --max-children 2 >> _build/mutation-run.log 2>&1 || true
fi
"$BIN/mutmut" results --all true > _build/mutation-results.txt 2>/dev/null || "$BIN/mutmut" results > _build/mutation-results.txt
total=$(grep -c ': ' _build/mutation-results.txt || true)
left=$(grep -c ': survived' _build/mutation-results.txt || true)
"$BIN/mutmut" results
echo "mutation: ${left} of ${total} mutants survived (see tests/MUTATION.md for the kept list)"
