#!/usr/bin/env bash
# The A side of the bf16-rounds A/B alone (main's binaries, the bfloat16 bench over both data
# kinds, twice), for a warm machine right after dev44.sh when too little device time is left
# for dev43.sh. carry ["build/carry/bins.tar.xz"]
source scripts/device-unpack.sh || exit 1
bench_plans bfloat16,bfloat16-narrow $((SECONDS + 40)) default default
grep -A2 -E "^narrow-(rows|cols|segments|read).* bfloat16" $OUT/bench.txt | grep -E "^narrow|^ +[0-9]" | paste - - | awk '{print $1, $2, "fast", $11, $12, "exact", $13, $14}'
echo "done at ${SECONDS}s"
