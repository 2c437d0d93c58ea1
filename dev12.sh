#!/usr/bin/env bash
# Device call of the fifty-fifth session: the bfloat16 fast column sums 8 a lane
# (v3::cols_halves_fast_wide, plan half_col_wide). The narrow and plan GPU tests (the new
# ShapesPlanGpu.Bfloat16FastColumnSumsKeepTheirBitsEightColumnsALane among them; the shared
# half-run steps of 3453eab too), memcheck / racecheck of the half columns, the bench with
# half_col_wide 0 / 1 / 0 / 1 (bfloat16, float16), then ncu (stall reasons and pipes) of the
# new kernel and of cols_body's.
# carry ["build/carry/bins.tar.xz"]; env TESTS_S (ctest's limit, default 240), TR (ctest -R)
source scripts/device-unpack.sh || exit 1
R='ShapesNarrow.*cuda|ShapesNarrowEdges.*cuda|ShapesPlan|BoolBytes.*cuda|ShapesNarrowAsync|ShapesNarrowCols|Types.*cuda'
timeout ${TESTS_S:-240} ctest --test-dir $B/tests --output-on-failure -j 12 --timeout 230 -R "${TR:-$R}" -E 'ShapesNarrowLanes' > $OUT/ctest.log 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Timeout|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
grep -E "Bfloat16FastColumnSums|ShapesNarrowColsHalfBody" $OUT/ctest.log | head -5
F='Backends/ShapesNarrow.HalfColumnsOfWhole16ByteRowsInEveryTileAndChunk/cuda_bfloat16:Backends/ShapesNarrow.ColumnHalfExtremesOfSpecialValuesAcrossRuns/cuda_float16'
: > $OUT/sanitize.log
for plan in half_col_wide=1 half_col_wide=1,col_blocks=37; do for tool in memcheck racecheck; do
  [ $SECONDS -gt 380 ] && { echo "sanitize: stopped at ${SECONDS}s"; break 2; }
  TALLY_SHAPES_PLAN=$plan timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/tally_tests --gtest_filter="$F" > /tmp/san.log 2>&1; s=$?
  { echo "### $tool $plan exit $s"; tail -30 /tmp/san.log; } >> $OUT/sanitize.log
  echo "$tool $plan: exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/san.log | tr '\n' ' ') at ${SECONDS}s"
done; done
for plan in half_col_wide=0 half_col_wide=1 half_col_wide=0 half_col_wide=1; do
  [ $SECONDS -gt 470 ] && { echo "bench: stopped at ${SECONDS}s"; break; }
  echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16 TALLY_SHAPES_PLAN=$plan timeout 40 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A2 -E "^## |narrow-(read|cols)" $OUT/bench.txt | grep -vE "^ +n |^--|^GPU" | head -40
S='--section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis'
for kt in 'cols_halves_fast_wide|1' 'cols_kernel<.*bf16_in.*fast_sum<float, float>|0'; do
  k=${kt%|*}; pl=${kt#*|}
  [ $SECONDS -gt 530 ] && { echo "ncu: stopped at ${SECONDS}s"; break; }
  TALLY_BENCH_TYPES=bfloat16 TALLY_SHAPES_PLAN=half_col_wide=$pl timeout 40 ncu --kernel-name-base demangled -k "regex:$k" --launch-skip 5 --launch-count 1 $S \
    $B/bench/tally_bench --only shapes-narrow --max-log2 26 > /tmp/ncu1.txt 2>&1
  { echo "## $k"; grep -vE "^\s*$|narrow-|^ +[0-9]{5,}" /tmp/ncu1.txt | tail -100; } >> $OUT/ncu.txt
done
grep -E "^## |Duration|Registers Per|Achieved Occupancy|No Eligible|Issued Warp|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|DRAM Throughput|Grid Size|Pipe|FP64|ALU" $OUT/ncu.txt | head -60
echo "done at ${SECONDS}s"
