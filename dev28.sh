#!/usr/bin/env bash
# Short device call of the fifty-seventh session: the lane sweep (tally_bench --only
# narrow-lanes) of the byte sums and max with index, now that 8 and 16 lanes exist for them
# (their rule, few_masked_lanes, was set in runs 150 / 173 from 1, 2, 4 and 32 lanes).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
TALLY_LANES_OPS=int8-sum,int8-argmax timeout 100 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8}' $OUT/lanes.txt
echo "done at ${SECONDS}s"
