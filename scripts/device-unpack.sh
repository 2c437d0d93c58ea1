# Sourced by the dev*.sh device-call scripts (repository root, on the device machine): makes
# $OUT, puts the torch venv and CUDA on PATH, unpacks the carried binaries
# (build/carry/bins.tar.xz, scripts/pack-carry.sh) into build-gpu, sets B=build-gpu, puts this
# tree's paths into the CTest files (pack-carry's @B@ / @SRC@) and prints the GPU.
mkdir -p "$OUT" build-gpu
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
# (or, when the binaries no longer fit one carry beside the tree, build/carry/tests.tar.xz and
# build/carry/bench.tar.xz, ONLY=tests / ONLY=bench, one a call: every pack carried is unpacked)
packs=${PACKS:-$(ls build/carry/*.tar.xz 2>/dev/null)}  # (PACKS: other carried packs, e.g. build/carry-br/bins.tar.xz)
[ -n "$packs" ] || { echo "no build/carry/*.tar.xz carried"; return 1; }
for p in $packs; do tar -C build-gpu -xJf $p || return 1; done
B=build-gpu
sed -i -e "s#@B@#$PWD/$B#g" -e "s#@SRC@#$PWD#g" $B/tests/*.cmake
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

# bench_plans TYPES STOP PLAN...: the narrow bench (2^26) of TYPES (TALLY_BENCH_TYPES) under each
# PLAN (TALLY_SHAPES_PLAN; "default": none) into $OUT/bench.txt, none started after STOP seconds.
bench_plans() {
  local types=$1 stop=$2 plan
  shift 2
  for plan in "$@"; do
    [ $SECONDS -gt $stop ] && { echo "bench: stopped at ${SECONDS}s"; break; }
    echo "## plan $plan (at ${SECONDS}s)" >> $OUT/bench.txt
    if [ $plan = default ]; then unset TALLY_SHAPES_PLAN; else export TALLY_SHAPES_PLAN=$plan; fi
    TALLY_BENCH_TYPES=$types timeout 30 $B/bench/tally_bench --only shapes-narrow --max-log2 26 >> $OUT/bench.txt 2>&1
  done
  unset TALLY_SHAPES_PLAN
}
