#!/usr/bin/env bash
# Builds bench/experiments/cols_probe.cu (the certified column pass timed per block, beside
# variants of its merge; an experiment, not a test) into build/probe/cols_probe for sm_90.
# Run it on the GPU machine by carrying build/probe/cols_probe: `build/probe/cols_probe [shape]`
# (shape 0: 65536 x 1024, 1: 8192 x 8192, 2: 1024 x 65536; all when omitted).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/probe
nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Isrc -Iinclude -Xptxas -v \
  -o build/probe/cols_probe bench/experiments/cols_probe.cu 2>&1 | grep -E "error|spill" | sort | uniq -c
