#!/usr/bin/env bash
# Device call of the sixtieth session (fourth), on the binaries of the half_gated change with
# the new test's expectation fixed (column 7 holds rows - 4 ones): every tally_tests suite
# through ctest, the new test under half_gated=0, memcheck on it, and the byte sums of
# segments of 200 under few_lanes=4 against the default (2 lanes), two rounds.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
timeout 420 ctest --test-dir $B/tests --output-on-failure -j 4 --timeout 400 > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|Total Test time" $OUT/ctest.log | tail -12
echo "skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
grep -B5 -A12 "Failure" $OUT/ctest.log | head -40
TALLY_SHAPES_PLAN=half_gated=0 timeout 60 $T --gtest_filter="ShapesNarrowAsync.Bfloat16*" > $OUT/tests0.txt 2>&1; echo "tests half_gated=0 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests0.txt
timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='ShapesNarrowAsync.Bfloat16*' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -3 $OUT/memcheck.txt
bench_plans int8,uint8 $((SECONDS + 60)) default few_lanes=4 default few_lanes=4
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-150
echo "done at ${SECONDS}s"
