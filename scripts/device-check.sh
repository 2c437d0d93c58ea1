#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run the whole test suite (GPU tests included),
# compute-sanitizer (memcheck, racecheck) on small cases, the SASS/resource report, and the
# benchmark. Logs go to $OUT (or ./out when run by hand).
#   usage: scripts/device-check.sh [tests|sanitize|bench|all]...   (default: all)
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
export NCCL_NVLS_ENABLE=0
steps=${*:-all}
want() { [[ " $steps " == *" all "* || " $steps " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"

echo "== build (sm_90)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" \
  >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j 16 >"$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -40; exit 1; }
grep -E "spill|warning" "$OUT/build.log" | sort | uniq | head -20

rc=0
if want tests; then
  echo "== tests"
  ctest --test-dir build-gpu --output-on-failure -j 4 --timeout 600 >"$OUT/ctest.log" 2>&1 || rc=1
  grep -E "tests passed|tests failed|Skipped|\*\*\*Failed|Total Test time" "$OUT/ctest.log" | tail -15
  grep -c "Skipped" "$OUT/ctest.log" | sed 's/^/skipped lines: /'
fi

if want sanitize; then
  echo "== compute-sanitizer"
  T=build-gpu/tests/tally_tests
  F='*Cuda*Small*:*cuda*Small*:*Tiny*cuda*:*cuda*Tiny*'
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$T" --gtest_filter="${SANITIZE_FILTER:-$F}" \
      >"$OUT/sanitize-$tool.log" 2>&1; s=$?
    echo "$tool: exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/sanitize-$tool.log" | head -2 | tr '\n' ' ')"
    [ $s -eq 0 ] || rc=1
  done
fi

if want sass; then
  echo "== SASS / resources"
  cuobjdump --dump-resource-usage build-gpu/src/libtally.a >"$OUT/resources.txt" 2>&1
  cuobjdump --dump-sass build-gpu/src/libtally.a >"$OUT/sass.txt" 2>&1
  echo "LDG.E.128 count: $(grep -c 'LDG.E.128' "$OUT/sass.txt"), local memory ops: $(grep -cE 'LDL|STL' "$OUT/sass.txt")"
fi

if want bench; then
  echo "== benchmark"
  if [ -x build-gpu/bench/tally_bench ]; then
    build-gpu/bench/tally_bench --csv "$OUT/bench.csv" --json "$OUT/bench.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt" | tail -60 || rc=1
  else
    echo "no benchmark binary"
  fi
fi
exit $rc
