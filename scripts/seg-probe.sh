#!/usr/bin/env bash
# Builds bench/experiments/seg_probe.cu (the rows kernel timed per block at the points of
# v3::no_marks, on one segment, the uneven segments and rows; an experiment, not a test) into build/probe/seg_probe for sm_90.
# Run it on the GPU machine by carrying build/probe/seg_probe: `build/probe/seg_probe`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/probe
nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Isrc -Iinclude -Xptxas -v \
  -o build/probe/seg_probe bench/experiments/seg_probe.cu 2>&1 | grep -E "error|spill" | sort | uniq -c
