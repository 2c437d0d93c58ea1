#!/usr/bin/env bash
# Device call of the fifty-ninth session (second), on the binaries with the CheckEnd test's fix
# (run 211: its blocking calls with bad offsets were checked for a status they never write)
# and few_byte_sum_lanes' 16 lanes from 1.5 KiB: every ShapesPlanGpu test, the ShapesNarrow
# tests of the byte types and bool, the stream-ordered shape tests, memcheck and racecheck on
# the check_end test, the int8 lane sweep, every narrow type's bench, check_end 0 against 1
# on int8 / uint16 / bfloat16 / uint32 (max with index) twice.
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
TYPES="cuda_int8 cuda_uint8 cuda_bool"
F=""; for t in $TYPES; do F="$F:Backends/ShapesNarrow*.*/$t"; done
timeout 200 $T --gtest_filter="${F#:}:ShapesNarrowAsync*:ShapesPlanGpu*:ShapesAsync*" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED|^\[==========\]|CheckEnd" $OUT/tests.txt | grep -v "^\[ *OK\|RUN" | head -12
grep -B2 -A8 Failure $OUT/tests.txt | head -40
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='ShapesPlanGpu.CheckEnd*' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.txt
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter='ShapesNarrowAsync*' > $OUT/racecheck.txt 2>&1; echo "racecheck rc=$? at ${SECONDS}s"; tail -2 $OUT/racecheck.txt
TALLY_LANES_OPS=int8-sum timeout 40 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' $OUT/lanes.txt
timeout 50 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
bench_plans int8,uint16,bfloat16,uint32 $((SECONDS + 200)) check_end=0 default check_end=0 default
awk '/^## plan/{p=$3} /narrow-segments-200/{h=$2; getline; getline; print p, h, $0}' $OUT/bench.txt | cut -c1-140
echo "done at ${SECONDS}s"
