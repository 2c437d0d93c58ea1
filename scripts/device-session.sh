#!/usr/bin/env bash
# One device call in priority order (each step's logs under $OUT, at most 8 files): the GPU
# tests of what changed (CTEST_FIRST), the benchmark (BENCH_ARGS), the Python and CLI GPU
# tests, compute-sanitizer on SANITIZE_FILTER, then the rest of the GPU suite. Run under the
# call's time limit: a step cut short still leaves the earlier steps' logs.
#   usage: PREBUILT=build/carry/bins.tar.xz CTEST_FIRST=regex [BENCH_ARGS=...] [SANITIZE_FILTER=...] scripts/device-session.sh
set -uo pipefail
: "${PREBUILT:?a tar from scripts/pack-carry.sh --python}" "${CTEST_FIRST:?a ctest regex}"
export PREBUILT
root=$OUT
log=$root/run.txt
step() { echo "== $(date +%T) $*" | tee -a "$log"; }
step "tests of the change: $CTEST_FIRST"
CTEST_JOBS=15 CTEST_REGEX="$CTEST_FIRST" OUT=$root/a scripts/device-check.sh tests 2>&1 | tee -a "$log"
if [[ -n "${BENCH_ARGS:-}" ]]; then
  step "benchmark $BENCH_ARGS"
  OUT=$root/m scripts/device-check.sh bench 2>&1 | tail -40 | tee -a "$log"
  rm -f "$root/m/h200.png" "$root/m/bench.csv"  # (8 files come back: the tables are in h200.md and bench.txt)
fi
step "python"
OUT=$root/p scripts/device-check.sh python 2>&1 | tee -a "$log"
step "cli"
CLI_K='cuda or gpu or minmax' CLI_TIMEOUT=120 OUT=$root/c scripts/device-check.sh cli 2>&1 | tee -a "$log"
if [[ -n "${SANITIZE_FILTER:-}" ]]; then
  step "sanitize"
  OUT=$root/s scripts/device-check.sh sanitize 2>&1 | tee -a "$log"
fi
step "the rest of the GPU suite"
CTEST_JOBS=15 CTEST_REGEX='cuda|Cuda|Gpu' CTEST_EXCLUDE="cli_pytest|$CTEST_FIRST" OUT=$root/b scripts/device-check.sh tests 2>&1 | tee -a "$log"
step "end"
