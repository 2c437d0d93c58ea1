#!/usr/bin/env bash
# Short device call (fifty-fourth session): the bfloat16 fast column sums under col_blocks 256 /
# 384 / 512 / 1024 (their bits follow the row chunks; is it the waves?), then ncu's stall
# reasons on warm launches of the bfloat16 fast column sums (cols_kernel<.., 8>), the half
# column max (cols_halves_wide) and the uint8 column max (cols_kernel<.., 4>).
# carry ["build/carry/bins.tar.xz"] (binaries of d1778c9: half_col_wide given explicitly)
source scripts/device-unpack.sh || exit 1
for cb in 512 256 384 1024 512; do
  echo "## col_blocks=$cb (at ${SECONDS}s)" >> $OUT/bench.txt
  TALLY_BENCH_TYPES=bfloat16 TALLY_SHAPES_PLAN=half_col_wide=1,col_blocks=$cb timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
done
grep -A2 -E "^## |narrow-(read|cols)" $OUT/bench.txt | grep -vE "^ +n |^--|^GPU" | head -40
S='--section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis'
export TALLY_SHAPES_PLAN=half_col_wide=1
for kt in 'cols_kernel<.*bf16_in.*fast_sum<float, float>|bfloat16' 'cols_halves_wide<.*f16_in.*extreme<float, true, false>|float16' 'cols_kernel<.*u8_in.*extreme<int, true, false>|uint8'; do
  k=${kt%|*}; t=${kt#*|}
  [ $SECONDS -gt 150 ] && break
  TALLY_BENCH_TYPES=$t timeout 60 ncu --kernel-name-base demangled -k "regex:$k" --launch-skip 5 --launch-count 1 $S \
    $B/bench/tally_bench --only shapes-narrow --max-log2 26 > /tmp/ncu1.txt 2>&1
  { echo "## $k"; grep -vE "^\s*$|narrow-|^ +[0-9]{5,}" /tmp/ncu1.txt | tail -90; } >> $OUT/ncu.txt
done
grep -E "^## |Duration|Registers Per|Achieved Occupancy|No Eligible|Issued Warp|Stall|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|DRAM Throughput|Block Limit|Grid Size" $OUT/ncu.txt | head -70
