#!/usr/bin/env bash
# Device call of the fifty-seventh session, on the binaries with few_unmasked_lanes for rows and
# segments and 4 lanes for the 2-byte sums from 256 bytes: the narrow / plan / types GPU tests,
# memcheck of the row and segment tests on uint64 (8 / 16 lanes by the rule) and int16 (4),
# then the bench of every narrow type (the status table), and the 16-bit and 8-byte types
# again under few_lanes=2 (the old choice for the 16-bit sums).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh); env TESTS_S (ctest's limit, default 200)
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|Types.*cuda|Float16'
timeout ${TESTS_S:-200} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 190 -R "$R" -E 'ShapesNarrowLanes(1|2|4|32)\.' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
F='Backends/ShapesNarrow.RowMajorColumnMajorPaddedAndNegativeStrides/cuda_uint64:Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_int16:Backends/ShapesNarrow.SegmentsAtEveryAlignmentOverShiftedBases/cuda_int16'
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1
echo "memcheck rows uint64, segments int16: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
cp /tmp/san.log $OUT/sanitize.log
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
bench_plans int16,uint16,float16,uint64 ${BENCH_STOP:-300} few_lanes=2 default
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$1" "$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-150
echo "done at ${SECONDS}s"
