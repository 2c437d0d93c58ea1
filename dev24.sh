#!/usr/bin/env bash
# Device call of the fifty-seventh session: the lane counts a row or segment over lengths of 16
# to 8192 elements (tally_bench --only narrow-lanes: the default rule against few_lanes 1..32)
# for the ops whose rule changed this session: int16 sums (few_masked_lanes' shorts), float16
# fast sums along segments and rows, uint64 sums along segments and rows (few_unmasked_lanes).
# carry ["build/carry/bins.tar.xz"] (ONLY=bench scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
TALLY_LANES_OPS=int16-sum,float16-sum,float16-rows,uint64-sum,uint64-rows timeout 200 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
grep -E "^narrow-lanes|^ +[0-9]" $OUT/lanes.txt | head -120 | cut -c1-150
echo "done at ${SECONDS}s"
