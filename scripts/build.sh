#!/usr/bin/env bash
# Configures and builds tally into ./build (CUDA backend when nvcc is found, CPU-only otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
