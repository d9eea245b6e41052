#!/bin/sh
# Runs one test suite for make test: its output goes to a log, and one line says how it went. A failing
# suite prints its whole log (then make test fails), so the failure is on screen without scrolling through
# the passing suites.
#
#   tools/run-suite.sh SUITE PLUSH_BIN LOGDIR
set -u
suite=$1 bin=$2 logs=$3
name=${suite#*/tests/}
log=$logs/$(echo "$name" | tr / _).log
mkdir -p "$logs"
start=$(date +%s.%N)
PLUSH_BIN=$bin "$suite" >"$log" 2>&1
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
# cmocka's summary names the skipped tests ("[  SKIPPED ] test_x"): they go on the suite's line, the
# reasons stay in the log
skipped=$(sed -n 's/^\[  SKIPPED \] \(test[^ ]*\)$/\1/p' "$log" | awk '!seen[$0]++' | tr '\n' ' ')
note=${skipped:+", skipped: $skipped(reasons in $log)"}
if [ "$rc" -eq 0 ]; then
    printf 'ok    %-36s %6.1f s%s\n' "$name" "$secs" "$note"
    exit 0
fi
cat "$log"
printf 'FAIL  %-36s %6.1f s (exit %d; log: %s)\n' "$name" "$secs" "$rc" "$log"
exit 1
