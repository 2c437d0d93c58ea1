#!/usr/bin/env bash
# Short device call (little device time left, fifty-sixth session): on the binaries with
# f16_in_place=1 and half_fast_col_blocks=384 as defaults, the bfloat16 fast column test, the
# stream-ordered narrow tests and the float16 / bfloat16 narrow tests (gtest), then the bench
# (bfloat16, float16) with the defaults against half_fast_col_blocks=512, twice.
# carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
timeout 60 $B/tests/tally_tests --gtest_filter='ShapesPlanGpu.Bfloat16Fast*:ShapesNarrowAsync.*:Backends/ShapesNarrow.*/cuda_float16:Backends/ShapesNarrow.*/cuda_bfloat16' > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]" $OUT/tests.log | head -6
bench_plans bfloat16,float16 ${BENCH_STOP:-90} default half_fast_col_blocks=512 default half_fast_col_blocks=512
awk '/^## plan/{p=$3} /narrow-cols-8192x8192 bfloat16|narrow-read bfloat16|narrow-rows-8192x8192 float16/{h=$1; getline; getline; print p, h, $0}' $OUT/bench.txt
echo "done at ${SECONDS}s"
