#!/usr/bin/env bash
# One call on the GPU machine: build for sm_90, run the whole test suite (GPU tests included),
# compute-sanitizer (memcheck, racecheck) on small cases, the resource/SASS check, the GPU
# benchmark with its report and plot, and the CPU comparison. At most 8 files go to $OUT
# (the device tool's limit); build logs stay in /tmp.
#   usage: scripts/device-check.sh [tests] [cli] [sanitize] [sass] [python] [pybench] [bench] [dist] [tune] [texact] [cpu] [ncu]
#   (default: all but ncu)
#   (tests runs ctest without cli_pytest unless CTEST_EXCLUDE says otherwise; cli runs the CLI
#   pytest files in parallel with pytest-xdist: each case starts processes that initialise CUDA)
#   env: CTEST_REGEX (tests: only those), CTEST_EXCLUDE (tests: not those), CTEST_JOBS, SANITIZE_FILTER,
#   SANITIZE_PLAN (sanitize: a second pass under this TALLY_SHAPES_PLAN), BENCH_ARGS,
#   CLI_TESTS (cli: the pytest files, default tests/cli), CLI_K (cli: pytest -k expression), CLI_TIMEOUT,
#   PREBUILT (a tar from scripts/pack-carry.sh, carried: skip the build; steps tests, sanitize, bench only),
#   PREBUILT_PY (a tar from scripts/pack-python.sh, carried: the python step's module, built here)
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
steps=${*:-all}
want() { [[ " $steps " == *" all "* || " $steps " == *" $1 "* ]]; }
B=build-gpu

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
if [[ -n "${PREBUILT:-}" ]]; then  # binaries built here by scripts/pack-carry.sh: no device build
  echo "== prebuilt binaries from $PREBUILT (no build)"
  mkdir -p $B && tar -C $B -xJf "$PREBUILT" || exit 1
  sed -i -e "s#@B@#$PWD/$B#g" -e "s#@SRC@#$PWD#g" $B/tests/*.cmake
  T=$B/tests  # ctest over the tally_tests suites only
elif [[ -n "${PREBUILT_PY:-}" && "$steps" == python ]]; then  # the module alone, built here: no device build
  T=$B
else
T=$B
echo "== build (sm_90)"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" \
  -DTALLY_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" \
  >/tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
cmake --build $B -j 16 >/tmp/build.log 2>&1 || { grep -E "error|Error" -A3 /tmp/build.log | head -40; exit 1; }
grep -E "spill|warning" /tmp/build.log | sort | uniq | head -10
fi

rc=0
if want tests; then
  echo "== tests"
  ctest --test-dir $T --output-on-failure -j ${CTEST_JOBS:-4} --timeout 900 ${CTEST_REGEX:+-R "$CTEST_REGEX"} -E "${CTEST_EXCLUDE:-cli_pytest}" >"$OUT/ctest.log" 2>&1 || rc=1
  grep -E "tests passed|tests failed|\(Failed\)|Total Test time" "$OUT/ctest.log" | tail -12
  echo "skipped: $(grep -c '(Skipped)' "$OUT/ctest.log")"; grep '(Skipped)' "$OUT/ctest.log" | head -5
fi

if want cli; then
  echo "== CLI tests (pytest -n 16)"
  TALLY_BIN=$PWD/$B/tools/cli/tally timeout -s INT ${CLI_TIMEOUT:-300} python3 -m pytest -q -n 16 -p no:cacheprovider \
    -p no:benchmark -rf ${CLI_K:+-k "$CLI_K"} ${CLI_TESTS:-tests/cli} >"$OUT/cli.log" 2>&1 || rc=1
  grep -E "passed|failed|FAILED|error" "$OUT/cli.log" | tail -8
fi

if want sanitize; then
  echo "== compute-sanitizer"
  F='Backends/Typed.TinyLengths/cuda*:Backends/Typed.SmallKnownValues/cuda*:Backends/Typed.EmptyInput/cuda*:Backends/Typed.MisalignedViews/cuda*:CudaOnly.*Small:Backends/Exact.WideExponentRanges/cuda*:Backends/Exact.KnownAnswers/cuda*'
  F="$F:Backends/Shapes.EmptyAndLengthOneAxes/cuda*:Backends/Types.*/cuda:Backends/Mean.SpecialValuesAndEmpty/cuda*:Backends/Norm.SpecialValuesEmptyAndErrors/cuda*"
  F="$F:Backends/Logical.*/cuda*:Backends/Axpy.*/cuda*:Backends/Transform.*/cuda*"
  F="$F:Backends/ShapesExact.SpecialValuesSignedZerosOverflowAndEmpty/cuda*:Backends/ShapesExact.StridedViews/cuda*"
  F="$F:Backends/ShapesExact.ColumnReductionsOfRowMajorMatricesSplitIntoRowChunks/cuda*:Backends/Shapes.*Segment*/cuda*"
  F="$F:Backends/Extremes.*/cuda*:Backends/Norms.*/cuda*"
  : >"$OUT/sanitize.log"
  # the default plan, then (SANITIZE_PLAN, a TALLY_SHAPES_PLAN value) another one
  for plan in "" ${SANITIZE_PLAN:-}; do
  for tool in memcheck racecheck; do
    env ${plan:+TALLY_SHAPES_PLAN=$plan} compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/tally_tests \
      --gtest_filter="${SANITIZE_FILTER:-$F}" >/tmp/san.log 2>&1; s=$?
    { echo "### $tool ${plan:+(plan $plan) }exit $s"; cat /tmp/san.log; } >>"$OUT/sanitize.log"
    echo "$tool${plan:+ (plan $plan)}: exit $s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1); $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' /tmp/san.log | tr '\n' ' ')"
    [ $s -eq 0 ] || rc=1
  done
  done
fi

if want sass; then
  echo "== resources / SASS"
  cuobjdump --dump-resource-usage $B/src/libtally.a 2>&1 | grep -E "Function|REG" | paste - - |
    sed -E 's/.*Function ([^ :]+).*REG:([0-9]+) STACK:([0-9]+).*LOCAL:([0-9]+).*/\2 regs, stack \3, local \4: \1/' | sort -u | head -40 >/tmp/res.txt
  awk '{print $1, $2, $3, $4, $5, $6}' /tmp/res.txt | sort | uniq -c | head
  cuobjdump --dump-sass $B/src/libtally.a >/tmp/sass.txt 2>&1
  echo "LDG.E.128 in tally: $(grep -c 'LDG.E.128' /tmp/sass.txt); local memory instructions (LDL/STL): $(grep -cE '\bLDL|\bSTL' /tmp/sass.txt)"
  # Local memory instructions per exact kernel (spills or stack arrays in the hot loop show here).
  awk '/Function :/{f=$3} /\<(LDL|STL)/{c[f]++} /\<(DADD|DFMA|DMUL)/{d[f]++} END{for(k in d) if (k ~ /exact_kernel/) printf "%5d LDL/STL %5d FP64: %s\n", c[k], d[k], k}' /tmp/sass.txt | c++filt | sed -E 's/tally::cuda::exact::exact_kernel//; s/\(.*//' | sort -k5 | head -24
fi

if want tune; then
  echo "== tuning sweep"
  $B/bench/tally_tune >/tmp/tune.txt 2>&1; head -1 /tmp/tune.txt
fi

if want texact; then
  echo "== exact-kernel variants"
  $B/bench/tally_tune_exact 2>&1 | tee "$OUT/tune-exact.txt"
fi

if want dist; then
  echo "== multi-GPU: NCCL tests and the 2-GPU benchmark ($(nvidia-smi -L | wc -l) GPUs)"
  ctest --test-dir $B --output-on-failure -R "Nccl|nccl|mpi_np" >/tmp/dist.log 2>&1 || rc=1
  grep -E "Test +#|tests passed|tests failed" /tmp/dist.log | tail -8
  timeout 240 $B/bench/tally_dist_bench 2>&1 | tee "$OUT/dist-bench.txt" | tail -25
fi

# python: the Python module built here (a prebuilt tree has none) and its pytest suite. Run 129
# (thirty-fourth session): with PREBUILT, the module's build (the whole library for sm_90) did
# not end within the call's 580 s after 85 s of tests, so give it a call of its own.
if want python; then
  echo "== Python module (build of _tally only) and pytest"
  P=$B  # (the full build configured it; with PREBUILT, a tree of its own; with PREBUILT_PY, none)
  if [[ -n "${PREBUILT_PY:-}" ]]; then  # the module built here by scripts/pack-python.sh
    P=build-pyprebuilt; mkdir -p $P/python/tally && cp python/tally/*.py python/tally/*.pyi $P/python/tally/ &&
      tar -C $P/python -xJf "$PREBUILT_PY" || rc=1
    ls $P/python/tally/_tally*.so || rc=1
  elif [[ -n "${PREBUILT:-}" && -d $B/py/tally ]]; then  # scripts/pack-carry.sh --python: the module is in it
    P=build-pyprebuilt; mkdir -p $P/python/tally && cp python/tally/*.py python/tally/*.pyi $B/py/tally/*.so $P/python/tally/ || rc=1
    PREBUILT_PY=$B/py
  elif [[ -n "${PREBUILT:-}" ]]; then
    P=build-py
    cmake -S . -B $P -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_BUILD_PYTHON=ON \
      -DPython_EXECUTABLE="$(command -v python3)" >/tmp/py-configure.log 2>&1 || { tail -20 /tmp/py-configure.log; rc=1; }
  fi
  if [[ -z "${PREBUILT_PY:-}" ]]; then
    s0=$(date +%s)
    cmake --build $P -j 16 --target _tally >/tmp/py-build.log 2>&1 || { grep -E "error" -A3 /tmp/py-build.log | head -30; rc=1; }
    echo "module built in $(( $(date +%s) - s0 )) s"
  fi
  PYTHONPATH=$P/python timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests >"$OUT/pytest.log" 2>&1 || rc=1
  tail -5 "$OUT/pytest.log"
fi

if want pybench; then
  echo "== Python benchmark (tally vs CuPy / torch from Python)"
  PYTHONPATH=$B/python python3 bench/python_bench.py --csv /tmp/python.csv --md "$OUT/python.md" >/tmp/pybench.txt 2>&1 || rc=1
  tail -30 /tmp/pybench.txt
fi

if want bench; then
  echo "== GPU benchmark"
  $B/bench/tally_bench --csv "$OUT/bench.csv" --json /tmp/bench.json ${BENCH_ARGS:-} >"$OUT/bench.txt" 2>&1 || rc=1
  python3 bench/report.py "$OUT/bench.csv" --png "$OUT/h200.png" --md "$OUT/h200.md" \
    --title "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), CUDA 13.0, $(date +%F)" || rc=1
  cat "$OUT/bench.txt" | grep -vE "^\s*$" | tail -75
fi

if [[ " $steps " == *" ncu "* ]]; then  # not in "all": the shape kernels' own device time (no launch or completion around them)
  echo "== ncu: shape kernels once each (2^26 float32)"
  # NCU_ARGS (e.g. "--section WarpStateStats --section Occupancy") replaces the two metrics;
  # NCU_KERNELS the kernel regex
  ncu --clock-control none ${NCU_ARGS:---metrics gpu__time_duration.sum,dram__bytes_read.sum} \
    -k regex:"${NCU_KERNELS:-rows_kernel|cols_kernel|read_kernel|check_offsets|DeviceSegmentedReduceKernel}" \
    $B/bench/tally_bench --only shapes-once --max-log2 26 >"$OUT/ncu.txt" 2>&1 || rc=1
  grep -E "rows_kernel|cols_kernel|read_kernel|check_offsets|SegmentedReduce|gpu__time_duration|dram__bytes|Stall|Occupancy|Warp Cycles|Throughput|Registers|Block Limit" "$OUT/ncu.txt" |
    sed -E 's/\(int, int, int\).*//' | cut -c1-150 | head -120
fi

if want cpu; then
  echo "== CPU benchmark ($(nproc) cores)"
  python3 bench/cpu_compare.py --bench $B/bench/tally_cpu_bench --csv /tmp/cpu.csv >"$OUT/cpu.txt" 2>&1 || rc=1
  cat "$OUT/cpu.txt"
fi
exit $rc
