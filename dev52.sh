#!/usr/bin/env bash
# Next device call (written in the sixty-second session): the GPU tests of the alignment checks
# (never run on a GPU yet), the odd-segment-count test, a good call after them in the same
# process, then dev50.sh (ncu of the exact bfloat16 kernels).
# carry ["build/carry/bins.tar.xz"] packed from c1e70fb or later (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
F="MisuseGpu.*:Backends/Transform.BadInput/cuda:ShapesAsync.OddSegmentCountsGrowTheStreamsWords:Backends/Misuse.*/cuda"
timeout 120 $T --gtest_filter="$F" > $OUT/tests.txt 2>&1; echo "tests rc=$? at ${SECONDS}s"
grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]|^\[==========\] [0-9]+ tests" $OUT/tests.txt
grep -B2 -A10 Failure $OUT/tests.txt | head -30
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="MisuseGpu.*" > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$? at ${SECONDS}s"; tail -2 $OUT/memcheck.txt
bash dev50.sh
echo "done at ${SECONDS}s"
