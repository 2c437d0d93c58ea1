#!/usr/bin/env bash
# Short device call of the fifty-seventh session: the lane sweep (tally_bench --only
# narrow-lanes) of the int16 and float16 max with index along segments (few_masked_lanes'
# extremes: 1 lane to 256 bytes, 2 to 1 KiB, 4 to 4 KiB, then 32; 8 and 16 lanes now exist).
# carry ["build/carry/bins.tar.xz"] (NO_CLI=1 scripts/pack-carry.sh)
source scripts/device-unpack.sh || exit 1
TALLY_LANES_OPS=int16-argmax,float16-argmax timeout 100 $B/bench/tally_bench --only narrow-lanes --max-log2 26 > $OUT/lanes.txt 2>&1; echo "lanes rc=$? at ${SECONDS}s"
awk '/^narrow-lanes-seg/{h=$1" "$2; getline; getline; print h, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' $OUT/lanes.txt
echo "done at ${SECONDS}s"
