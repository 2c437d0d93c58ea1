#!/usr/bin/env bash
# Short device call of the fifty-fifth session (little device time left): the new GPU tests
# (float16 rows / segments with specials, blocking and stream-ordered; the bfloat16 fast
# column sums' bits across plans), the float16 / bfloat16 narrow tests, memcheck of the
# float16 test, then the bench (float16, bfloat16) with half_col_wide 1 / 0 / 1,col_blocks=384.
# carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
TALLY_SHAPES_PLAN=f16_in_place=1 timeout 100 $B/tests/tally_tests --gtest_filter='ShapesNarrowAsync.*:ShapesPlanGpu.Bfloat16Fast*:Backends/ShapesNarrow.*/cuda_float16:Backends/ShapesNarrow.*/cuda_bfloat16' > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]|tests, listed" $OUT/tests.log | head -8
grep -E "^\[       OK \] ShapesNarrowAsync.Float16Row|^\[  FAILED  \]" $OUT/tests.log | head -8
TALLY_SHAPES_PLAN=f16_in_place=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter='ShapesNarrowAsync.Float16RowAndSegmentSumsAndMeansOfSpecials' > /tmp/san.log 2>&1
echo "memcheck: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
cp /tmp/san.log $OUT/sanitize.log
for plan in f16_in_place=1 f16_in_place=0,half_col_wide=0 f16_in_place=1,col_blocks=384; do
  [ $SECONDS -gt ${BENCH_STOP:-150} ] && { echo "bench: stopped at ${SECONDS}s"; break; }
  echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16,float16 TALLY_SHAPES_PLAN=$plan timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A3 -E "^## |narrow-" $OUT/bench.txt | grep -E "^## |^narrow|^ +6710" | head -60
echo "done at ${SECONDS}s"
