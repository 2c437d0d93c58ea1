#!/usr/bin/env bash
# One build's benchmark, ROUNDS times, on the device: the tally_bench of TAR (scripts/ab-pack.sh)
# writes $OUT/NAME-r.txt for r = 1..ROUNDS. Two builds (A and B) run in back-to-back calls on the
# same warm machine, then scripts/ab-compare.py 'DIR/A-*.txt' 'DIR/B-*.txt' compares them here.
# (One call cannot carry both: their compressed device code differs, 43 MB each, over the 64 MiB carry.)
#   usage: scripts/ab-bench.sh TAR NAME [ROUNDS] -- BENCH_ARGS...
set -uo pipefail
tarball=$1 name=$2; shift 2
rounds=2
[[ $# -gt 0 && $1 != -- ]] && { rounds=$1; shift; }
[[ ${1:-} == -- ]] && shift
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT" ab-bin && tar -C ab-bin -xJf "$tarball" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in $(seq 1 "$rounds"); do
  s0=$(date +%s)
  ab-bin/tally_bench "$@" >"$OUT/$name-$r.txt" 2>&1 || echo "$name round $r: exit $?"
  echo "$name round $r: $(( $(date +%s) - s0 )) s"
done
