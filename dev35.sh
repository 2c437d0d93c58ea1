#!/usr/bin/env bash
# Device call of the fifty-ninth session: few_byte_sum_lanes (1 / 2 / 4 / 32 lanes for byte and
# bool segment sums and means by mean bytes) checked: the ShapesNarrow GPU tests of the byte
# types and bool (default plan), their segment tests under few_lanes 2 / 4 / 16, memcheck and
# racecheck on byte segment tests, the int8 lane sweep, every narrow type's bench (the status
# table) and the probe's block_done parts (argument "done").
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
(scripts/narrow-seg-probe.sh > $OUT/probe-build.log 2>&1) &  # (the probe beside: it does not fit the carry)
T=$B/tests/tally_tests
TYPES="cuda_int8 cuda_uint8 cuda_bool"
F=""; for t in $TYPES; do F="$F:Backends/ShapesNarrow*.*/$t"; done
timeout 150 $T --gtest_filter="${F#:}:ShapesNarrowAsync*:ShapesPlanGpu*" > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]|tests?, listed below" $OUT/tests.log | head -8
S=""; for t in $TYPES; do S="$S:Backends/ShapesNarrow.Segment*/$t"; done
for l in 2 4 16; do
  TALLY_SHAPES_PLAN=few_lanes=$l timeout 60 $T --gtest_filter="${S#:}" > $OUT/lanes-tests.log 2>&1; echo "few_lanes=$l rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/lanes-tests.log | tr '\n' ' ') at ${SECONDS}s"
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_uint8:Backends/ShapesNarrow.SegmentSumsOfTheTypeExtremesUpToAndPastSplit/cuda_int8' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.log
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_bool' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$? at ${SECONDS}s"; tail -2 $OUT/racecheck.log
TALLY_LANES_OPS=int8-sum timeout 40 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' $OUT/lanes.txt
timeout 50 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
wait
timeout 60 build/probe/narrow_seg_probe done > $OUT/probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
grep -E 'read kernel|lean' $OUT/probe.txt | sed -E 's/ minb 4 U 4//; s/ B local//'
echo "done at ${SECONDS}s"
