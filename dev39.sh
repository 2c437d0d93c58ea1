#!/usr/bin/env bash
# Device call of the fifty-ninth session (fourth), on the binaries of check_end 2 as the
# default: the stream-ordered shape tests, every ShapesPlanGpu test, the ShapesNarrow segment
# tests of int8, uint8, bool and int16, and every narrow type's bench (the status table).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
S=""; for t in cuda_int8 cuda_uint8 cuda_bool cuda_int16; do S="$S:Backends/ShapesNarrow.Segment*/$t"; done
timeout 120 $T --gtest_filter="ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*${S}" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests" $OUT/tests.txt
grep -B2 -A8 Failure $OUT/tests.txt | head -30
timeout 50 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
echo "done at ${SECONDS}s"
