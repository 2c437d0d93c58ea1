#!/usr/bin/env bash
# Device call of the fifty-sixth session: exact float16 row / segment / column sums and means
# read in place (plan f16_in_place=1: f16_fixed_op tells an output's infinities / NaNs on the
# device), never device-tested before. The narrow and plan GPU tests (with the
# ShapesNarrowF16InPlace(Whole).cuda entries), memcheck / racecheck of the float16 specials test
# and the bfloat16 half columns, then the bench (float16, bfloat16): f16_in_place 0 / 1 and the
# bfloat16 fast column sums' row chunks (col_blocks 512, the default / 384 / 1024), twice.
# carry ["build/carry/bins.tar.xz"]; env TESTS_S (ctest's limit, default 240)
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|ShapesNarrowCols|Types.*cuda|Float16'
timeout ${TESTS_S:-240} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 230 -R "$R" -E 'ShapesNarrowLanes' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
grep -E "Float16RowAndSegment|Bfloat16FastColumnSums" $OUT/ctest.log | grep -E "Passed|Failed" | head -4
: > $OUT/sanitize.log
for fp in 'ShapesNarrowAsync.Float16RowAndSegmentSumsAndMeansOfSpecials|f16_in_place=1' 'Backends/ShapesNarrow.HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk/cuda_bfloat16|col_blocks=37'; do
  F=${fp%|*}; plan=${fp#*|}
  for tool in ${TOOLS:-memcheck racecheck}; do
    [ $SECONDS -gt ${SAN_STOP:-300} ] && { echo "sanitize: stopped at ${SECONDS}s"; break 2; }
    TALLY_SHAPES_PLAN=$plan timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1; s=$?
    { echo "### $tool $F $plan exit $s"; tail -30 /tmp/san.log; } >> $OUT/sanitize.log
    echo "$tool $F ($plan): exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
  done
done
for plan in f16_in_place=0 f16_in_place=1 f16_in_place=1,col_blocks=384 f16_in_place=1,col_blocks=1024 f16_in_place=0 f16_in_place=1 f16_in_place=1,col_blocks=384 f16_in_place=1,col_blocks=1024; do
  [ $SECONDS -gt ${BENCH_STOP:-400} ] && { echo "bench: stopped at ${SECONDS}s"; break; }
  echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16,float16 TALLY_SHAPES_PLAN=$plan timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A3 -E "^## |narrow-" $OUT/bench.txt | grep -E "^## |^narrow|^ +6710" | head -80
echo "done at ${SECONDS}s"
