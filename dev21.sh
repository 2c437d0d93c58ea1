#!/usr/bin/env bash
# Device call of the fifty-seventh session, on the binaries with few_segment_lanes (8 and 16
# lanes for the narrow unmasked ops' segments of 1-4 KiB): the narrow / plan / types GPU tests
# with the new ShapesNarrowLanes8 / 16 entries, the narrow segment probe (rows of 200 too, and
# 2 / 4 / 8 vectors in flight a lane), memcheck of the long-short segments test on uint64 and
# uint32 (16 and 8 lanes by the new rule), then the bench of the default against few_lanes=4
# and =8 (the 16-bit types' segments), and every narrow type once.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh); the probe is built on the device; env TESTS_S (ctest's limit, default 200)
source scripts/device-unpack.sh || exit 1
# (the probe built here, on the CPU, while the tests run: its binary does not fit the carry)
(scripts/narrow-seg-probe.sh > /tmp/probe-build.log 2>&1; echo "probe build rc=$?" >> /tmp/probe-build.log) &
probe_pid=$!
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|Types.*cuda|Float16'
timeout ${TESTS_S:-200} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 190 -R "$R" -E 'ShapesNarrowLanes(1|2|4|32)\.' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
grep -E "ShapesNarrowLanes(8|16)" $OUT/ctest.log | grep -E "Passed|Failed" | head -4
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tally_tests --gtest_filter='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_uint64:Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_uint32' > /tmp/san.log 2>&1
echo "memcheck long-short segments uint64 / uint32: exit $?; $(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
cp /tmp/san.log $OUT/sanitize.log
wait $probe_pid; cat /tmp/probe-build.log
if [ -x build/probe/narrow_seg_probe ]; then
  timeout 90 build/probe/narrow_seg_probe > $OUT/narrow_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
  grep -E "read kernel|WRONG" $OUT/narrow_seg_probe.txt | cut -c1-150
fi
bench_plans int16,uint16,float16,bfloat16,uint32,uint64 ${BENCH_STOP:-300} default few_lanes=4 few_lanes=8
awk '/^## plan/{p=$3} /narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-150
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
echo "done at ${SECONDS}s"
