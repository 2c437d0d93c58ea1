#!/usr/bin/env bash
# Device call of the fifty-ninth session (third), on the binaries with plan check_end 2 (the
# block whose offsets check's count is the last writes the status at once, from its atomic's
# return; nothing at the blocks' ends): every ShapesPlanGpu test (the check_end test under
# check_end 1, 2 and 0), the stream-ordered shape tests under the default and under
# check_end=2, memcheck and racecheck, and check_end 1 / 2 / 0 on int8 / uint16 / bfloat16 /
# uint32 twice.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
timeout 120 $T --gtest_filter="ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests|CheckEnd" $OUT/tests.txt | grep -v RUN
grep -B2 -A8 Failure $OUT/tests.txt | head -30
TALLY_SHAPES_PLAN=check_end=2 timeout 120 $T --gtest_filter="ShapesNarrowAsync*:ShapesAsync*:Backends/ShapesNarrow.Segment*/cuda_int8" > $OUT/tests2.txt 2>&1; echo "tests check_end=2 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests2.txt
grep -B2 -A8 Failure $OUT/tests2.txt | head -30
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='ShapesPlanGpu.CheckEnd*' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.txt
TALLY_SHAPES_PLAN=check_end=2 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='ShapesNarrowAsync*' > $OUT/racecheck.txt 2>&1; echo "racecheck rc=$? at ${SECONDS}s"; tail -2 $OUT/racecheck.txt
bench_plans int8,uint16,bfloat16,uint32 $((SECONDS + 200)) default check_end=2 check_end=0 default check_end=2 check_end=0
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-140
echo "done at ${SECONDS}s"
