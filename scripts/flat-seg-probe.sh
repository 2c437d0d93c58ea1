#!/usr/bin/env bash
# Builds bench/experiments/flat_seg_probe.cu (integer sums along CSR segments from flat tiles,
# beside the read kernel; an experiment, not a test) into build/probe/flat_seg_probe for sm_90.
# Run it on the GPU machine: `build/probe/flat_seg_probe [log2 n]` (2^26 when omitted).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/probe
nvcc -std=c++20 -O3 -arch=sm_90 -Xptxas -v -o build/probe/flat_seg_probe bench/experiments/flat_seg_probe.cu 2>&1 |
  grep -E "error|warning|spill|registers|Function properties for" | grep -B1 -E "error|warning|spill [1-9]|registers" | head -40
