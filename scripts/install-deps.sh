#!/usr/bin/env bash
# Installs what building, testing and the demo need (Debian/Ubuntu packages and PyPI).
# The CUDA toolkit is optional: with nvcc on PATH the CUDA backend is built too.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ make libcli11-dev libfmt-dev zlib1g-dev libgtest-dev \
  libmpfr-dev libgmp-dev libomp-dev python3 python3-pip openmpi-bin libopenmpi-dev >/dev/null
PIP="python3 -m pip"
$PIP install -q numpy scikit-learn pytest matplotlib nanobind scikit-build-core hypothesis ml_dtypes 2>/dev/null ||
  $PIP install -q --break-system-packages numpy scikit-learn pytest matplotlib nanobind scikit-build-core hypothesis ml_dtypes
echo "install-deps: done"
