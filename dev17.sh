#!/usr/bin/env bash
# Device call of the fifty-sixth session: (1) bench/experiments/flat_seg_probe.cu (integer sums
# along CSR segments from flat tiles; carry build/probe/flat_seg_probe, scripts/flat-seg-probe.sh),
# (2) dev16.sh (the f16_in_place tests, sanitizers and half bench), (3) the library's narrow
# integer bench beside the probe (segments of 200 in the same run).
# carry ["build/carry/bins.tar.xz", "build/probe/flat_seg_probe"]
mkdir -p "$OUT"
timeout 60 build/probe/flat_seg_probe > $OUT/flat_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
grep -E "read kernel|equal200|WRONG|checked equal|CASES" $OUT/flat_seg_probe.txt | head -40
TESTS_S=${TESTS_S:-200} SAN_STOP=${SAN_STOP:-250} BENCH_STOP=${BENCH_STOP:-290} bash dev16.sh
TALLY_BENCH_TYPES=int8,uint8,int16,uint32,uint64 timeout 40 build-gpu/bench/tally_bench --only shapes-narrow --max-log2 26 > $OUT/bench-int.txt 2>&1
grep -A2 -E "^narrow-(read|segments)" $OUT/bench-int.txt | grep -E "^narrow|^ +6710" | head -30
echo "dev17 done at ${SECONDS}s"
