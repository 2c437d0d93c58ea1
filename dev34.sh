#!/usr/bin/env bash
# Device call of the fifty-eighth session, on the binaries with the 64-bit lane partials
# (v2::fold_span_sum) and the checks' word read early (kEarly): the ShapesNarrow GPU tests of
# the lane-sum types (and the new SegmentSumsOfTheTypeExtremesUpToAndPastSplit), their
# segment tests under every few_lanes, memcheck / racecheck on two segment tests, the lane
# sweep of the int8, int16 and uint32 sums, every narrow type's bench and the probe (lean).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
(scripts/narrow-seg-probe.sh > $OUT/probe-build.log 2>&1) &  # (the probe beside, ~35 s: it does not fit the carry)
T=$B/tests/tally_tests
TYPES="cuda_int8 cuda_uint8 cuda_bool cuda_int16 cuda_uint16 cuda_uint32"
F=""; for t in $TYPES; do F="$F:Backends/ShapesNarrow*.*/$t"; done
timeout 150 $T --gtest_filter="${F#:}:ShapesNarrowAsync*:ShapesPlanGpu*" > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]|tests?, listed below" $OUT/tests.log | head -8
S=""; for t in $TYPES; do S="$S:Backends/ShapesNarrow.Segment*/$t"; done
for l in 1 8 32; do
  TALLY_SHAPES_PLAN=few_lanes=$l timeout 60 $T --gtest_filter="${S#:}" > $OUT/lanes-tests.log 2>&1; echo "few_lanes=$l rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/lanes-tests.log | tr '\n' ' ') at ${SECONDS}s"
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_int16:Backends/ShapesNarrow.SegmentSumsOfTheTypeExtremesUpToAndPastSplit/cuda_uint32' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.log
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_int8' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$? at ${SECONDS}s"; tail -2 $OUT/racecheck.log
TALLY_LANES_OPS=int8-sum,int16-sum,uint32-sum timeout 70 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' $OUT/lanes.txt
timeout 50 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
wait
timeout 60 build/probe/narrow_seg_probe lean > $OUT/probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
grep -E 'read kernel|segs' $OUT/probe.txt
echo "done at ${SECONDS}s"
