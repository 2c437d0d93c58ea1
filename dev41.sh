#!/usr/bin/env bash
# Device call of the sixtieth session (third), on the binaries with plan half_gated (exact
# bfloat16 sums and means stream-ordered: the certified pass in place, the widened copy and the
# exact kernels gated behind it): the new test under half_gated 1 and 0, the stream-ordered and
# plan tests, bfloat16's narrow tests, memcheck on the new test, and the bench of bfloat16 /
# float16 under half_gated 1 and 0, two rounds.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
timeout 150 $T --gtest_filter="ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*:Backends/ShapesNarrow*/cuda_bfloat16:*Bfloat16*" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests|Bfloat16ExactSums" $OUT/tests.txt | grep -v RUN
grep -B2 -A8 Failure $OUT/tests.txt | head -40
TALLY_SHAPES_PLAN=half_gated=0 timeout 60 $T --gtest_filter="ShapesNarrowAsync.Bfloat16*" > $OUT/tests0.txt 2>&1; echo "tests half_gated=0 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests0.txt
grep -B2 -A8 Failure $OUT/tests0.txt | head -20
bench_plans bfloat16,float16 $((SECONDS + 100)) default half_gated=0 default half_gated=0
awk '/^## plan/{p=$3} /narrow-(rows|cols|segments)/{h=$1" "$2; getline; print p, h, $0; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-190
timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='ShapesNarrowAsync.Bfloat16*' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -3 $OUT/memcheck.txt
echo "done at ${SECONDS}s"
