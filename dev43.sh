#!/usr/bin/env bash
# Device call of the sixty-first session (run 217), on the binaries of cb7cc19 (the gated copy
# leased before the pass, dependent_launch_ok shared): the stream-ordered, plan and bfloat16
# tests, the new test under half_gated=0, memcheck on it, the byte sums of segments of 200
# under few_lanes=4 against the default, then every GPU ctest entry until the call's end
# (the whole GPU suite last ran in runs 188-189).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh); dev44.sh runs this script
# on another pack (PACKS, MEMCHECK_FILTER, END)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
timeout 150 $T --gtest_filter="ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*:Backends/ShapesNarrow*/cuda_bfloat16:*Bfloat16*" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests|Bfloat16ExactSums" $OUT/tests.txt | grep -v RUN
grep -B2 -A8 Failure $OUT/tests.txt | head -30
TALLY_SHAPES_PLAN=half_gated=0 timeout 60 $T --gtest_filter="ShapesNarrowAsync.Bfloat16*" > $OUT/tests0.txt 2>&1; echo "tests half_gated=0 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests0.txt
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="${MEMCHECK_FILTER:-ShapesNarrowAsync.Bfloat16*}" > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -3 $OUT/memcheck.txt
# the bfloat16 bench twice (data over 47 binades, "bfloat16", and over 16, "bfloat16-narrow"):
# dev43.sh (main) and dev44.sh (bf16-rounds) back to back on one warm machine are the A/B
bench_plans bfloat16,bfloat16-narrow $((SECONDS + 40)) default default
grep -A2 -E "^narrow-(rows|cols|segments|read).* bfloat16" $OUT/bench.txt | grep -E "^narrow|^ +[0-9]" | paste - - | awk '{print $1, $2, "fast", $11, $12, "exact", $13, $14}'
mv $OUT/bench.txt $OUT/bench-bf16.txt
bench_plans int8,uint8 $((SECONDS + 60)) default few_lanes=4 default few_lanes=4
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-150
left=$((${END:-560} - SECONDS)); echo "ctest: ${left}s left at ${SECONDS}s"
timeout $left ctest --test-dir $B/tests -j 16 --timeout 300 --output-on-failure -R 'cuda|Cuda|Gpu|Async' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -12
echo "done: $(grep -cE 'Test +#' $OUT/ctest.log) entries ended, $(grep -c 'Passed' $OUT/ctest.log) passed, $(grep -c '(Skipped)' $OUT/ctest.log) skipped"
echo "done at ${SECONDS}s"
