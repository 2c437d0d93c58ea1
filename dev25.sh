#!/usr/bin/env bash
# Device call of the fifty-seventh session, on the binaries with few_unmasked_lanes' 8 / 16
# boundary at 1.5 KiB and the 2-byte sums taking its counts from 256 bytes: the narrow / plan /
# types GPU tests, memcheck of the int16 and uint64 segment tests, the lane sweep
# (tally_bench --only narrow-lanes) of the ops whose rule moved, and every narrow type once.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh); env TESTS_S (ctest's limit, default 200)
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|Types.*cuda|Float16'
timeout ${TESTS_S:-200} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 190 -R "$R" -E 'ShapesNarrowLanes' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
F='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_int16:Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_uint64:Backends/ShapesNarrow.RowMajorColumnMajorPaddedAndNegativeStrides/cuda_float16'
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1
echo "memcheck: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
cp /tmp/san.log $OUT/sanitize.log
TALLY_LANES_OPS=int16-sum,float16-sum,float16-rows,uint64-sum,uint64-rows timeout 100 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg(200|300|600|1000|2000) /{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8}' $OUT/lanes.txt
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
echo "done at ${SECONDS}s"
