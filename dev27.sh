#!/usr/bin/env bash
# Short device call of the fifty-seventh session, on the binaries with the narrow integer readers
# moved into shapes_narrow_readers.cuh (a code move): the ShapesNarrow GPU tests of every integer type (gtest),
# then every narrow type's bench (the same figures as run 201 expected).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
timeout 90 $B/tests/tally_tests --gtest_filter='Backends/ShapesNarrow*.*/cuda_int8:Backends/ShapesNarrow*.*/cuda_uint8:Backends/ShapesNarrow*.*/cuda_uint16:Backends/ShapesNarrow*.*/cuda_uint64:Backends/ShapesNarrow*.*/cuda_uint32:Backends/ShapesNarrow*.*/cuda_int16:Backends/ShapesNarrow*.*/cuda_float16:ShapesNarrowAsync.*' > $OUT/tests.log 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[==========\]|SKIPPED \]" $OUT/tests.log | sort | uniq -c | head -8
timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-all.txt 2>&1; echo "bench-all rc=$? at ${SECONDS}s"
awk '/narrow-segments-200|narrow-read/{h=$1" "$2; getline; getline; print h, $0}' $OUT/bench-all.txt | cut -c1-150
echo "done at ${SECONDS}s"
