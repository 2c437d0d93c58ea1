#!/usr/bin/env bash
# Device call of the fifty-sixth session, on the binaries with f16_in_place=1 and
# half_fast_col_blocks=384 as defaults: the narrow / plan / types GPU tests (ShapesNarrowF16Widened
# and ShapesNarrowF16InPlaceWhole too), memcheck of the bfloat16 fast column test, then the
# bench: bfloat16 / float16 with the defaults against half_fast_col_blocks=512 (the old chunks),
# twice, and every narrow type once (the status table). First, when carried, the flat segment
# probe (bench/experiments/flat_seg_probe.cu: its "guessed" and "warp/chunk" variants not yet run).
# carry ["build/carry/bins.tar.xz", "build/probe/flat_seg_probe"]; env TESTS_S (ctest's limit, default 200)
source scripts/device-unpack.sh || exit 1
if [ -x build/probe/flat_seg_probe ]; then
  timeout 60 build/probe/flat_seg_probe > $OUT/flat_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
  grep -E "read kernel|equal200|WRONG|checked equal|CASES" $OUT/flat_seg_probe.txt | grep -E "read kernel|guessed|warp/chunk|WRONG|CASES|all cases" | head -40
fi
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|ShapesNarrowCols|Types.*cuda|Float16'
timeout ${TESTS_S:-200} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 190 -R "$R" -E 'ShapesNarrowLanes' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
grep -E "F16Widened|F16InPlaceWhole|Bfloat16FastColumnSums" $OUT/ctest.log | grep -E "Passed|Failed" | head -4
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter='ShapesPlanGpu.Bfloat16FastColumnSums*' > /tmp/san.log 2>&1
echo "memcheck bf16 fast columns: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
cp /tmp/san.log $OUT/sanitize.log
bench_plans bfloat16,float16 ${BENCH_STOP:-260} default half_fast_col_blocks=512 default half_fast_col_blocks=512
awk '/^## plan/{p=$3} /narrow-cols-8192x8192 bfloat16|narrow-read bfloat16/{h=$1; getline; getline; print p, h, $0}' $OUT/bench.txt
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
echo "done at ${SECONDS}s"
