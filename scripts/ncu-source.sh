#!/usr/bin/env bash
# ncu source-level profile (SASS line by line) of shape kernels, one launch each, from the
# narrow benchmark at 2^26 elements: per kernel NAME=REGEX (demangled names), the report's
# source page as CSV under $OUT (summarise with scripts/sass-regions.py) and its details page.
#   usage: scripts/ncu-source.sh NAME=REGEX ...   (binaries in build-gpu: PREBUILT unpacked, or built)
#   e.g.   scripts/ncu-source.sh 'f16seg=rows_kernel<.*f16_fixed_op, \(int\)2,'
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-$PWD/out}
if [[ -n "${PREBUILT:-}" && ! -x build-gpu/bench/tally_bench ]]; then
  mkdir -p build-gpu && tar -C build-gpu -xJf "$PREBUILT" || exit 1
fi
B=build-gpu/bench/tally_bench
for spec in "$@"; do
  name=${spec%%=*} re=${spec#*=}
  timeout 220 ncu --clock-control none --set full --import-source no --kernel-name-base demangled -k "regex:$re" -c 1 \
    -o "$OUT/$name" $B --only shapes-narrow --max-log2 26 >"$OUT/$name.log" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass >"$OUT/$name-sass.csv" 2>&1 || echo "$name: no source page"
  ncu -i "$OUT/$name.ncu-rep" --page details >"$OUT/$name-details.txt" 2>&1
  rm -f "$OUT/$name.ncu-rep" "$OUT/$name.log"
  grep -E "Duration|Executed Ipc A|Issue Slots Busy" "$OUT/$name-details.txt" | sed "s/^/$name: /"
done
