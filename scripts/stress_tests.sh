#!/usr/bin/env bash
# The dashboard's Pilot and snapshot tests, five times in a row, with one busy loop per
# core running beside them: a test that waits a fixed time instead of for its condition
# fails here. Prints one line per run and the total; exits 1 if any test failed.
#
#   bash scripts/stress_tests.sh            # RUNS=5 by default
#   KEEP=/some/dir bash scripts/stress_tests.sh   # keeps the log of every run that failed
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
runs=${RUNS:-5}
tests=(tests/test_app.py tests/test_many.py tests/test_snapshots.py tests/test_recall_view.py tests/test_live.py
       tests/test_bulk_edges.py tests/test_replaced.py tests/test_daily.py tests/test_verbs.py)
work=$(mktemp -d)
loops=()
cleanup() {
  kill "${loops[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cores=$(nproc)
for _ in $(seq "$cores"); do
  "$python" -c "while True: pass" &
  loops+=($!)
done
echo "stress: $runs runs of ${tests[*]}, beside $cores busy loop(s)"

total_failed=0
total_passed=0
for run in $(seq "$runs"); do
  start=$(date +%s)
  "$python" -m pytest -q -p no:cacheprovider --junitxml="$work/run$run.xml" \
    "${tests[@]}" >"$work/run$run.log" 2>&1
  read -r passed failed < <("$python" - "$work/run$run.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
suite = suite if suite.tag == "testsuite" else suite[0]
tests, failures, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
print(tests - failures - errors - skipped, failures + errors)
PY
  )
  total_failed=$((total_failed + failed))
  total_passed=$((total_passed + passed))
  echo "run $run: $passed passed, $failed failed in $(($(date +%s) - start)) s"
  if [ "$failed" -gt 0 ]; then
    grep -E "^(FAILED|ERROR) " "$work/run$run.log" | sed 's/^/    /'
    if [ -n "${KEEP:-}" ]; then
      mkdir -p "$KEEP" && cp "$work/run$run.log" "$KEEP/run$run.log"
      echo "    log kept: $KEEP/run$run.log"
    fi
  fi
done
echo "stress: $total_passed passed, $total_failed failed over $runs runs under load"
[ "$total_failed" -eq 0 ]
