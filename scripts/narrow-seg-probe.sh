#!/usr/bin/env bash
# Builds bench/experiments/narrow_seg_probe.cu (the library's narrow integer segment sums,
# v3::rows_body, under other lanes a segment and resident blocks a SM; an experiment, not a
# test) into build/probe/narrow_seg_probe for sm_90.
# Run it on the GPU machine by carrying build/probe/narrow_seg_probe: `build/probe/narrow_seg_probe`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/probe
nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Isrc -Iinclude -Xptxas -v \
  -o build/probe/narrow_seg_probe bench/experiments/narrow_seg_probe.cu 2>&1 | grep -E "error|spill [1-9]" | sort | uniq -c
