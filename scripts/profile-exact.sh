#!/usr/bin/env bash
# Nsight Compute profile of the float64 exact kernels (bench/tune_exact.cu), for the "why is
# the float64 dot slower than a sum" question in docs/performance.md. Writes $OUT/ncu-*.txt.
#   usage: scripts/profile-exact.sh [kernel regex ...]
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
B=build-gpu
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90-real" >/tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
cmake --build $B -j 16 --target tally_tune_exact >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
i=0
for k in "${@:-levels_acc<true, 9, 1, 0>}"; do
  i=$((i + 1))
  ncu --kernel-name-base demangled -k "regex:$k" -c 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section InstructionStats $B/bench/tally_tune_exact >"$OUT/ncu-$i.txt" 2>&1
  echo "== $k"; grep -vE "^==PROF==|^f(32|64) " "$OUT/ncu-$i.txt" | grep -E "Duration|Throughput|Pipe|Stall|Warp Cycles|Issued|Eligible|Active Warps|Achieved|Registers|Block Limit|Executed Ipc|No Eligible|One or More" | head -60
done
