#!/usr/bin/env bash
# Device call of the sixtieth session (second), on the binaries of 60ae212 (check_end 2 the
# default; no rebuild): the segments of 200 under a block per item (plan blocks_per_sm=-1)
# against the persistent grid (default), two rounds, every narrow type but uint64 / bfloat16.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
TALLY_SHAPES_PLAN=blocks_per_sm=-1 timeout 120 $T --gtest_filter="ShapesNarrowAsync*:ShapesAsync*:Backends/ShapesNarrow.Segment*/cuda_int8" > $OUT/tests.txt 2>&1; echo "tests blocks_per_sm=-1 rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\] [0-9]+ tests" $OUT/tests.txt
grep -B2 -A8 Failure $OUT/tests.txt | head -30
bench_plans int8,uint8,int16,float16,uint32 $((SECONDS + 150)) default blocks_per_sm=-1 default blocks_per_sm=-1
awk '/^## plan/{p=$3} /narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-150
echo "done at ${SECONDS}s"
