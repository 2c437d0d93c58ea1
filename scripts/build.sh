#!/usr/bin/env bash
# Configures and builds tally into ./build (CUDA backend when nvcc is found, CPU-only otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
# The Python module is built (and its tests registered) when nanobind is installed.
py=OFF
python3 -c 'import nanobind' 2>/dev/null && py=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTALLY_BUILD_PYTHON=$py "$@" >/dev/null
cmake --build build -j "$(nproc)"
