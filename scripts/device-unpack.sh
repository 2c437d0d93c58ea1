# Sourced by the dev*.sh device-call scripts (repository root, on the device machine): makes
# $OUT, puts the torch venv and CUDA on PATH, unpacks the carried binaries
# (build/carry/bins.tar.xz, scripts/pack-carry.sh) into build-gpu, sets B=build-gpu, puts this
# tree's paths into the CTest files (pack-carry's @B@ / @SRC@) and prints the GPU.
mkdir -p "$OUT" build-gpu
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
tar -C build-gpu -xJf build/carry/bins.tar.xz || return 1
B=build-gpu
sed -i -e "s#@B@#$PWD/$B#g" -e "s#@SRC@#$PWD#g" $B/tests/*.cmake
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
