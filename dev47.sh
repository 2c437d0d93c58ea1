#!/usr/bin/env bash
# ShapesPlanGpu.ByteExtremesStagedOrNotKeepTheFirstIndex failed once in run 217's ctest -j 16
# (beside 15 other GPU processes) and passed alone in the same call. Here: 16 copies at once,
# each repeated, then alone; every failure's assertion into $OUT. carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
T=$B/tests/tally_tests
F=ShapesPlanGpu.ByteExtremesStagedOrNotKeepTheFirstIndex
for i in $(seq 1 16); do
  timeout 240 $T --gtest_filter=$F --gtest_repeat=10 > $OUT/conc-$i.txt 2>&1 &
done
wait
echo "concurrent: $(cat $OUT/conc-*.txt | grep -c '^\[       OK \]') OK, $(cat $OUT/conc-*.txt | grep -c '^\[  FAILED  \] ShapesPlanGpu') failed at ${SECONDS}s"
cat $OUT/conc-*.txt | grep -B2 -A12 "Failure" | head -60
# the same 16 at once, stream-ordered and blocking alike, beside the other byte extremes tests
timeout 120 $T --gtest_filter=$F --gtest_repeat=20 > $OUT/alone.txt 2>&1
echo "alone: $(grep -c '^\[       OK \]' $OUT/alone.txt) OK, $(grep -c '^\[  FAILED  \] ShapesPlanGpu' $OUT/alone.txt) failed at ${SECONDS}s"
grep -A12 "Failure" $OUT/alone.txt | head -30
for f in $OUT/conc-*.txt; do grep -q Failure $f || rm $f; done
