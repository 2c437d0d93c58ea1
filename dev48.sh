#!/usr/bin/env bash
# Sixty-second session, first call: dev47.sh's hunt for run 217's one failure
# (ShapesPlanGpu.ByteExtremesStagedOrNotKeepTheFirstIndex under ctest -j 16: 16 copies at once,
# repeated, with the GPU's memory sampled; then alone), then the 8 plan-forcing entries run 217
# did not finish (ShapesNarrowLanes1-32, ShapesNarrowColsHalfBody*), -j 8, until the call's end.
# carry ["build/carry/bins.tar.xz"] (main's binaries, 1eb7bf8's library = main's GPU code)
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
F=ShapesPlanGpu.ByteExtremesStagedOrNotKeepTheFirstIndex
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader -lms 500 > $OUT/mem.txt 2>&1 &
MON=$!
for i in $(seq 1 16); do
  timeout 240 $T --gtest_filter=$F --gtest_repeat=10 > $OUT/conc-$i.txt 2>&1 &
done
wait $(jobs -p | grep -v "^$MON$")
kill $MON 2>/dev/null
echo "concurrent: $(cat $OUT/conc-*.txt | grep -c '^\[       OK \]') OK, $(cat $OUT/conc-*.txt | grep -c '^\[  FAILED  \] ShapesPlanGpu') failed at ${SECONDS}s"
echo "memory used (MiB): max $(sort -n $OUT/mem.txt | tail -1)"
cat $OUT/conc-*.txt | grep -B2 -A14 "Failure" | head -80
timeout 120 $T --gtest_filter=$F --gtest_repeat=20 > $OUT/alone.txt 2>&1
echo "alone: $(grep -c '^\[       OK \]' $OUT/alone.txt) OK, $(grep -c '^\[  FAILED  \] ShapesPlanGpu' $OUT/alone.txt) failed at ${SECONDS}s"
grep -A14 "Failure" $OUT/alone.txt | head -30
for f in $OUT/conc-*.txt; do grep -q Failure $f || rm $f; done
left=$((${END:-500} - SECONDS)); echo "ctest: ${left}s left at ${SECONDS}s"
timeout $left ctest --test-dir $B/tests -j 8 --timeout 400 --output-on-failure -R 'ShapesNarrowLanes|ShapesNarrowColsHalfBody' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|Total Test time" $OUT/ctest.log | tail -14
grep -B2 -A10 "Failure" $OUT/ctest.log | head -40
echo "done at ${SECONDS}s"
