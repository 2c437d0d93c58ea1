#!/usr/bin/env bash
# Device call of the fifty-fifth session: the narrow GPU tests (the shared half-run steps of
# 3453eab: half_pair_take / half_run_key), memcheck / racecheck of the half columns, then the
# bfloat16 fast column sums under col_blocks 512 / 256 / 384 / 1024 / 512 (their bits follow
# the row chunks: is it the waves?), then ncu's stall reasons (bfloat16 fast column sums,
# float16 column max, uint8 column max).
# carry ["build/carry/bins.tar.xz"]; env TESTS_S (ctest's limit, default 240), TR (ctest -R)
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|ShapesNarrowCols|Types.*cuda'
timeout ${TESTS_S:-240} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 230 -R "${TR:-$R}" -E 'ShapesNarrowLanes' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
F='Backends/ShapesNarrow.HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk/cuda_*:Backends/ShapesNarrow.ColumnHalfExtremesOfSpecialValuesAcrossRuns/cuda_*'
: > $OUT/sanitize.log
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1; s=$?
  { echo "### $tool exit $s"; tail -30 /tmp/san.log; } >> $OUT/sanitize.log
  echo "$tool: exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
done
for cb in 512 256 384 1024 512; do
  [ $SECONDS -gt 450 ] && { echo "bench: stopped at ${SECONDS}s"; break; }
  echo "## col_blocks=$cb (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16 TALLY_SHAPES_PLAN=col_blocks=$cb timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A2 -E "^## |narrow-(read|cols)" $OUT/bench.txt | grep -vE "^ +n |^--|^GPU" | head -40
S='--section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis'
for kt in 'cols_kernel<.*bf16_in.*fast_sum<float, float>|bfloat16' 'cols_halves_wide<.*f16_in.*extreme<float, true, false>|float16' 'cols_kernel<.*u8_in.*extreme<int, true, false>|uint8'; do
  k=${kt%|*}; t=${kt#*|}
  [ $SECONDS -gt 500 ] && { echo "ncu: stopped at ${SECONDS}s"; break; }
  TALLY_BENCH_TYPES=$t timeout 50 ncu --kernel-name-base demangled -k "regex:$k" --launch-skip 5 --launch-count 1 $S \
    $B/bench/tally_bench --only shapes-narrow --max-log2 26 > /tmp/ncu1.txt 2>&1
  { echo "## $k"; grep -vE "^\s*$|narrow-|^ +[0-9]{5,}" /tmp/ncu1.txt | tail -90; } >> $OUT/ncu.txt
done
grep -E "^## |Duration|Registers Per|Achieved Occupancy|No Eligible|Issued Warp|Stall|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|DRAM Throughput|Block Limit|Grid Size" $OUT/ncu.txt | head -70
echo "done at ${SECONDS}s"
