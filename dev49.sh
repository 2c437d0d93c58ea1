#!/usr/bin/env bash
# Sixty-second session, second call, on the binaries of de8b410 + the bfloat16 staging
# (row_stages_of takes the certified pass over bfloat16): the fix of run 219's fault (the new
# test and the byte extremes test, each alone in its own process), the bfloat16 and plan tests
# under the default and under row_stages=0, memcheck and racecheck of the staged bfloat16
# rows, the bfloat16 bench under default / row_stages=0 (A/B in one binary) and few_lanes 2 / 8,
# then the GPU suite at -j 16 until END.  carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
for f in ShapesAsync.OddSegmentCountsGrowTheStreamsWords ShapesPlanGpu.ByteExtremesStagedOrNotKeepTheFirstIndex; do
  timeout 60 $T --gtest_filter=$f > $OUT/alone-${f##*.}.txt 2>&1; echo "$f alone rc=$? at ${SECONDS}s"
  grep -E "^\[  (PASSED|FAILED)|Failure" -A3 $OUT/alone-${f##*.}.txt | head -12
done
BF="ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*:Backends/ShapesNarrow*/cuda_bfloat16:*Bfloat16*"
timeout 150 $T --gtest_filter="$BF" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests" $OUT/tests.txt
grep -B2 -A10 Failure $OUT/tests.txt | head -30
TALLY_SHAPES_PLAN=row_stages=0 timeout 90 $T --gtest_filter="Backends/ShapesNarrow*/cuda_bfloat16:*Bfloat16*" > $OUT/tests-rs0.txt 2>&1; echo "tests row_stages=0 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests-rs0.txt
MC="Backends/ShapesNarrow.HalfExactSumsOfCloseAndOutlyingTerms/cuda_bfloat16:ShapesNarrowAsync.Bfloat16*"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$MC" > $OUT/$tool.txt 2>&1; echo "$tool rc=$? at ${SECONDS}s"; tail -2 $OUT/$tool.txt
done
bench_plans bfloat16,bfloat16-narrow $((SECONDS + 130)) default row_stages=0 default row_stages=0 few_lanes=1 few_lanes=2 few_lanes=8
awk '/^## plan/{p=$3} /^narrow-(rows|cols|segments|read)/{h=$1" "$2} /^ +[0-9]/{if (h!="") print p, h, $0; h=""}' $OUT/bench.txt | grep -v "^$" | cut -c1-170 | head -80
left=$((${END:-500} - SECONDS)); echo "ctest: ${left}s left at ${SECONDS}s"
timeout $left ctest --test-dir $B/tests -j 16 --timeout 300 --output-on-failure -R 'cuda|Cuda|Gpu|Async' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -12
echo "done: $(grep -cE 'Test +#' $OUT/ctest.log) entries ended, $(grep -c ' Passed ' $OUT/ctest.log) passed, $(grep -c '(Skipped)\|Skipped' $OUT/ctest.log) skipped"
gzip -9 $OUT/ctest.log
echo "done at ${SECONDS}s"
