#!/usr/bin/env bash
# Sixty-second session: ncu of the exact bfloat16 kernels at 2^26 (main's binaries), both
# data kinds: the certified rows kernel (rows of 8192, a warp each: G = 32) and the segments
# kernel (segments of 200, 4 lanes each: G = 4). The details page (stall reasons, occupancy,
# pipes) and the SASS source page (scripts/sass-regions.py) of each.  carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
RX='rows_kernel<tally::cuda::narrow_k::narrow_op<tally::cuda::.*bf16_in, tally::cuda::shapes_k::certified_sum<float, float, \(bool\)0>'
for t in bfloat16 bfloat16-narrow; do
  for G in 32 4; do
    name=$t-G$G
    TALLY_BENCH_TYPES=$t timeout 150 ncu --clock-control none --set full --import-source no --kernel-name-base demangled \
      -k "regex:$RX.*\(int\)$G, \(bool\)1>" -c 1 -o $OUT/$name build-gpu/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/$name.log 2>&1
    ncu -i $OUT/$name.ncu-rep --page details > $OUT/$name-details.txt 2>&1
    [ $t = bfloat16 ] && ncu -i $OUT/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
    rm -f $OUT/$name.ncu-rep
    echo "== $name at ${SECONDS}s"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Executed Ipc A|Issue Slots Busy|Memory Throughput|DRAM Throughput|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per|stall|Stall" $OUT/$name-details.txt | cut -c1-400 | head -24
    [ -f $OUT/$name-sass.csv ] && python3 scripts/sass-regions.py $OUT/$name-sass.csv --top 12 2>&1 | head -30
  done
done
echo "done at ${SECONDS}s"
