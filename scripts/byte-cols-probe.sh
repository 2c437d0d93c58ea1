#!/usr/bin/env bash
# Builds bench/experiments/byte_cols_probe.cu (byte column sums in three lane widths and two
# chunk merges beside the read kernel; an experiment, not a test) into build/probe/byte_cols_probe
# for sm_90, and into build/probe/byte_cols_probe_rt with a run-time row stride. Run them on the
# GPU machine: `build/probe/byte_cols_probe[_rt] [rows]` (8192 and 32768 rows of 8192 bytes
# when omitted).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/probe
nvcc -std=c++20 -O3 -arch=sm_90 -Xptxas -v -o build/probe/byte_cols_probe bench/experiments/byte_cols_probe.cu 2>&1 |
  grep -E "error|spill|registers|Function properties for" | grep -B1 -E "error|spill [1-9]|registers" | head -40
# the same with the row stride known only at run time (-DPROBE_RUNTIME_STRIDE), as the library's
nvcc -std=c++20 -O3 -arch=sm_90 -DPROBE_RUNTIME_STRIDE -Xptxas -v -o build/probe/byte_cols_probe_rt bench/experiments/byte_cols_probe.cu 2>&1 |
  grep -E "error|spill|registers|Function properties for" | grep -B1 -E "error|spill [1-9]|registers" | head -40
