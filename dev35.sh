#!/usr/bin/env bash
# Short device call of the fifty-eighth session, on the binaries with few_byte_sum_lanes (the
# byte and bool segment sums: 4 lanes from 256 bytes, 16 from 1.5 KiB): their ShapesNarrow
# GPU tests (int8, uint8, bool) by the rule and under few_lanes=16 and 2, the int8 lane sweep,
# the byte types' bench.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
F='Backends/ShapesNarrow*.*/cuda_int8:Backends/ShapesNarrow*.*/cuda_uint8:Backends/ShapesNarrow*.*/cuda_bool:BoolBytes*'
timeout 60 $T --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]" $OUT/tests.log | head -4
for l in 16 2; do
  TALLY_SHAPES_PLAN=few_lanes=$l timeout 40 $T --gtest_filter='Backends/ShapesNarrow.Segment*/cuda_int8:Backends/ShapesNarrow.Segment*/cuda_uint8:Backends/ShapesNarrow.Segment*/cuda_bool' > $OUT/lanes-tests.log 2>&1; echo "few_lanes=$l rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/lanes-tests.log | tr '\n' ' ') at ${SECONDS}s"
done
TALLY_LANES_OPS=int8-sum timeout 40 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8}' $OUT/lanes.txt
TALLY_BENCH_TYPES=int8,uint8 timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench.txt 2>&1; echo "bench rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench.txt | cut -c1-150
echo "done at ${SECONDS}s"
