#!/usr/bin/env bash
# Short device call of the fifty-seventh session, on the binaries with 2 lanes for the byte min /
# max from 128 to 512 bytes: their ShapesNarrow GPU tests (int8, uint8, bool; gtest), the byte
# lane sweep again, and every narrow type's bench.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
timeout 60 $B/tests/tally_tests --gtest_filter='Backends/ShapesNarrow*.*/cuda_int8:Backends/ShapesNarrow*.*/cuda_uint8:Backends/ShapesNarrow*.*/cuda_bool:BoolBytes*' > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]" $OUT/tests.log | head -6
TALLY_LANES_OPS=int8-argmax timeout 60 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8}' $OUT/lanes.txt
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
echo "done at ${SECONDS}s"
