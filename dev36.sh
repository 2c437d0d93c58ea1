#!/usr/bin/env bash
# Device call of the fifty-ninth session, on the binaries with check_end (stream-ordered
# segments of the ops that never record an overflow end without block_done; plan check_end)
# and few_byte_sum_lanes: the ShapesNarrow GPU tests of the byte types and bool, the
# stream-ordered shape tests, every ShapesPlanGpu test (CheckEndSetsThroughGoodBadAndOtherCalls
# among them), the byte segment tests under few_lanes 2 / 4 / 16, memcheck and racecheck on
# stream-ordered segment tests, the int8 lane sweep, every narrow type's bench, check_end 0
# against 1 on int8 / int16 / float16 twice, and the probe's block_done parts.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
(scripts/narrow-seg-probe.sh > $OUT/probe-build.log 2>&1) &  # (the probe beside: it does not fit the carry)
T=$B/tests/tally_tests
TYPES="cuda_int8 cuda_uint8 cuda_bool"
F=""; for t in $TYPES; do F="$F:Backends/ShapesNarrow*.*/$t"; done
timeout 200 $T --gtest_filter="${F#:}:ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*" > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]|tests?, listed below|CheckEnd" $OUT/tests.log | head -12
S=""; for t in $TYPES; do S="$S:Backends/ShapesNarrow.Segment*/$t"; done
for l in 2 4 16; do
  TALLY_SHAPES_PLAN=few_lanes=$l timeout 60 $T --gtest_filter="${S#:}" > $OUT/lanes-tests.log 2>&1; echo "few_lanes=$l rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/lanes-tests.log | tr '\n' ' ') at ${SECONDS}s"
done
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='ShapesAsync.StatusReportsBadOffsetsAndOverflowThenClears:Backends/ShapesNarrow.SegmentsShortLongAndPastSplitInOneCall/cuda_uint8' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.log
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='ShapesAsync.StatusReportsBadOffsetsAndOverflowThenClears' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$? at ${SECONDS}s"; tail -2 $OUT/racecheck.log
TALLY_LANES_OPS=int8-sum timeout 40 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' $OUT/lanes.txt
timeout 50 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
bench_plans int8,int16,float16 $((SECONDS + 150)) check_end=0 default check_end=0 default
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-140
wait
timeout 60 build/probe/narrow_seg_probe done > $OUT/probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
grep -E 'read kernel|lean' $OUT/probe.txt | sed -E 's/ minb 4 U 4//; s/ B local//'
echo "done at ${SECONDS}s"
