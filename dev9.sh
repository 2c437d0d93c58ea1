#!/usr/bin/env bash
# Device call of the fifty-fourth session: the half columns' wide kernels (plan half_col_wide).
# carry ["build/carry/bins.tar.xz"]; env TESTS_S (ctest's limit, default 300), TR (ctest -R), BENCH=0 skips the bench
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|ShapesNarrowLanes4|ShapesNarrowCols|Types.*cuda'
timeout ${TESTS_S:-300} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 280 -R "${TR:-$R}" > $OUT/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
F='Backends/ShapesNarrow.HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk/cuda_float16:Backends/ShapesNarrow.ColumnHalfExtremesOfSpecialValuesAcrossRuns/cuda_float16:Backends/ShapesNarrow.HalfExact*/cuda_float16'
: > $OUT/sanitize.log
for plan in half_col_wide=1 half_col_wide=1,col_blocks=1; do for tool in memcheck racecheck; do
  [ $SECONDS -gt 420 ] && { echo "sanitize: stopped at ${SECONDS}s"; break 2; }
  TALLY_SHAPES_PLAN=$plan timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1; s=$?
  { echo "### $tool $plan exit $s"; tail -30 /tmp/san.log; } >> $OUT/sanitize.log
  echo "$tool $plan: exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ')"
done; done
[ "${BENCH:-1}" = 0 ] && exit 0
for plan in half_col_wide=0 half_col_wide=1 half_col_wide=0 half_col_wide=1; do
  [ $SECONDS -gt ${STOP_S:-500} ] && { echo "bench: stopped at ${SECONDS}s"; break; }
  echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=float16,bfloat16,int16 TALLY_SHAPES_PLAN=$plan timeout $(( ${STOP_S:-500} + 80 - SECONDS )) $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A2 -E "^## |narrow-(read|cols)" $OUT/bench.txt | grep -vE "^ +n |^--" | head -60
