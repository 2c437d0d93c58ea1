#!/usr/bin/env bash
# Device call of the fifty-fifth session (second): cols_halves_fast_wide with its last chunk
# block loading 16 partials together. The bfloat16 GPU tests of the narrow suite and the plan
# test of the fast column sums' bits, memcheck of the half columns with 37 row chunks, then
# the bench (bfloat16) with half_col_wide 0 / 1 / 1 and col_blocks=384, twice.
# carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
timeout 200 $B/tests/tally_tests --gtest_filter='ShapesPlanGpu.Bfloat16Fast*:Backends/ShapesNarrow.*/cuda_bfloat16:Backends/ShapesNarrowAsync.*/cuda_bfloat16' > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|tests ran|SKIPPED \]" $OUT/tests.log | sort | uniq -c | sort -rn | head -8
TALLY_SHAPES_PLAN=col_blocks=37 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter='Backends/ShapesNarrow.HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk/cuda_bfloat16' > /tmp/san.log 2>&1
echo "memcheck col_blocks=37: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
for plan in half_col_wide=0 half_col_wide=1 half_col_wide=1,col_blocks=384 half_col_wide=0 half_col_wide=1 half_col_wide=1,col_blocks=384; do
  echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16 TALLY_SHAPES_PLAN=$plan timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A3 -E "^## |narrow-(read|cols)" $OUT/bench.txt | grep -E "^## |^ +6710" | head -40
echo "done at ${SECONDS}s"
