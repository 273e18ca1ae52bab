#!/usr/bin/env bash
# Performance gates for CI. Nothing here compares absolute wall-clock time:
#  1. malloc-count thresholds of the micro-benchmarks in Benchmarks/
#     (ordo-one/benchmark, deterministic hashing, committed Thresholds/);
#  2. ratio floors from the bench runner, each ratio measured against a
#     baseline in the same process (`bench --quick --gate`).
# Exits non-zero when any gate fails; prints what it compared either way.
set -uo pipefail
cd "$(dirname "$0")/.."
export SWIFT_DETERMINISTIC_HASHING=1
# The malloc-count benchmarks are targets of the package only with this set
# (Package.swift); set for every step, so that the manifest stays one.
export STRATA_MALLOC_GATES=1
SWIFT=${SWIFT:-swift}
failed=0
gate1=""

# One release build serves both gates: the runner and the `strata` command
# first, then the malloc-count benchmarks, which link the libraries just
# built instead of compiling them again. One build at a time (they share
# .build).
buildlog=$(mktemp)
if ! ("$SWIFT" build -c release --product strata && "$SWIFT" build -c release --product bench) >"$buildlog" 2>&1; then
    grep -vE '^\[[0-9]+/[0-9]+\]|^Compiling|^Write |^Linking' "$buildlog" | tail -n 40
    echo "perf-gate: FAIL (the release build of strata and bench failed)"
    rm -f "$buildlog"
    exit 1
fi
rm -f "$buildlog"

echo "== perf gate 1/2: malloc-count thresholds (Benchmarks/Thresholds)"
log=$(mktemp)
"$SWIFT" package benchmark thresholds check --path Benchmarks/Thresholds --no-progress >"$log" 2>&1
status=$?
grep -vE '^\[[0-9]+/[0-9]+\]|^Compiling|^Building|^Build |^Write |^Linking' "$log" | tail -n 60
if grep -q "is EQUAL to the defined thresholds" "$log"; then
    echo "gate 1: PASS (every malloc count equals its threshold)"
elif grep -q "is WORSE than the defined thresholds" "$log"; then
    echo "gate 1: FAIL (malloc counts above their thresholds; see the table above)"
    gate1="gate 1 (malloc counts) failed"
    failed=1
elif grep -q "is BETTER than the defined thresholds" "$log"; then
    # ordo-one/benchmark exits non-zero for improvements too; they pass here.
    echo "gate 1: PASS (fewer mallocs than the thresholds: run 'make perf-thresholds' to lock them in)"
else
    echo "gate 1: FAIL (benchmark run did not complete, exit $status)"
    gate1="gate 1 (malloc counts) did not complete"
    failed=1
fi
rm -f "$log"

echo
echo "== perf gate 2/2: same-run ratio floors (swift run -c release bench --quick --gate)"
benchlog=$(mktemp)
if ! "$SWIFT" run -c release --skip-build bench --quick --gate --json perf/results/gate.json 2>&1 | tee "$benchlog"; then
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    # The names again at the very end, where a log's tail shows them.
    grep -E '^\| .*\| +FAIL \|$|^perf gates failed' "$benchlog" | tail -n 20
    rm -f "$benchlog"
    [ -n "$gate1" ] && echo "$gate1"
    echo "perf-gate: FAILED"
    exit 1
fi
rm -f "$benchlog"
echo "perf-gate: passed"
