#!/usr/bin/env bash
# device call (written in the fifty-third session; the half max kernel renamed in the fifty-fourth): every GPU test on the binaries of
# build/carry/bins.tar.xz (16 jobs, as run 160), then ncu's stall reasons on warm launches of the
# half and byte column max (library) beside the probe's byte max (4-byte lanes, partials).
# carry ["build/carry/bins.tar.xz","build/probe/byte_cols_probe_rt"]
# env: TESTS_S (ctest's limit, default 360), TR / TE (ctest -R / -E), NCU=0 to skip the ncu step
source scripts/device-unpack.sh || exit 1
timeout ${TESTS_S:-360} ctest --test-dir $B/tests --output-on-failure -j 16 --timeout 300 -R "${TR:-cuda|Cuda|Gpu|Async|Nccl|nccl}" ${TE:+-E "$TE"} > $OUT/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|tests failed|\(Failed\)|Total Test time" $OUT/ctest.log | tail -15
echo "passed lines: $(grep -c ' Passed ' $OUT/ctest.log); skipped: $(grep -c '(Skipped)' $OUT/ctest.log)"
[ "${NCU:-1}" = 0 ] && exit 0
S='--section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis'
for k in 'cols_halves_wide<.*f16_in.*extreme<float, true, false>' 'cols_kernel<.*u8_in.*extreme<int, true, false>'; do
  timeout 120 ncu --kernel-name-base demangled -k "regex:$k" --launch-skip 5 --launch-count 1 $S \
    $B/bench/tally_bench --only shapes-narrow --max-log2 26 > /tmp/ncu1.txt 2>&1
  { echo "## library $k"; grep -vE "^\s*$|narrow-|^ +[0-9]{5,}" /tmp/ncu1.txt | tail -90; } >> $OUT/ncu.txt
done
timeout 60 ncu --kernel-name-base demangled -k 'regex:cols_max<4, 32, false>' --launch-skip 5 --launch-count 1 $S \
  build/probe/byte_cols_probe_rt 8192 > /tmp/ncu2.txt 2>&1
{ echo "## probe max-v4-u32-part (run-time stride)"; tail -90 /tmp/ncu2.txt; } >> $OUT/ncu.txt
grep -E "^## |Duration|Registers Per|Achieved Occupancy|No Eligible|Issued Warp|Stall|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|DRAM Throughput" $OUT/ncu.txt | head -80
