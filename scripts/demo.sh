#!/usr/bin/env bash
# Runs the tally command-line tool on real data and prints numpy's answer beside tally's:
# scikit-learn's bundled iris.csv and diabetes_data_raw.csv.gz, and .npy files written by numpy.
# Exits nonzero if any answer disagrees beyond its bound.
#   usage: scripts/demo.sh [BUILD_DIR]     (default: build; the tool is BUILD_DIR/tools/cli/tally)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TALLY=$BUILD/tools/cli/tally
[ -x "$TALLY" ] || { echo "demo: $TALLY not found: build first (scripts/build.sh)" >&2; exit 2; }
DATA=$(python3 -c 'import os, sklearn; print(os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data"))')
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# numpy's answers, one "key value" line each, and the .npy inputs.
python3 - "$DATA" "$TMP" >"$TMP/numpy.txt" <<'EOF'
import math, os, sys
from fractions import Fraction
import numpy as np
data, tmp = sys.argv[1:]

def exact_dot(a, b):  # the exact dot product of float64 data, correctly rounded
    return float(sum(Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a, b)))

iris = np.loadtxt(os.path.join(data, "iris.csv"), delimiter=",", skiprows=1)
diab = np.loadtxt(os.path.join(data, "diabetes_data_raw.csv.gz"))
# "<key>_exact": the correctly rounded exact value (math.fsum, exact rationals).
for c in range(4):
    print(f"iris_sum{c}", repr(float(iris[:, c].sum())))
    print(f"iris_sum{c}_exact", repr(math.fsum(iris[:, c])))
print("iris_dot02", repr(float(np.dot(iris[:, 0], iris[:, 2]))))
print("iris_dot02_exact", repr(exact_dot(iris[:, 0], iris[:, 2])))
for c in (0, 2):
    print(f"diab_sum{c}", repr(float(diab[:, c].sum())))
    print(f"diab_sum{c}_exact", repr(math.fsum(diab[:, c])))
print("diab_dot23", repr(float(np.dot(diab[:, 2], diab[:, 3]))))
print("iris_max3", repr(float(iris[:, 3].max())))
print("iris_argmax3", int(iris[:, 3].argmax()))
print("diab_argmin2", int(diab[:, 2].argmin()))
print("diab_dot23_exact", repr(exact_dot(diab[:, 2], diab[:, 3])))
rng = np.random.default_rng(2024)
f = rng.random(1_000_000, dtype=np.float32)
g = rng.random(1_000_000, dtype=np.float32)
i = rng.integers(-1000, 1000, size=1_000_000, dtype=np.int32)
for name, a in (("f32", f), ("g32", g), ("i32", i)):
    np.save(os.path.join(tmp, name + ".npy"), a)
print("f32_sum", str(f.sum()))
print("i32_sum", int(i.sum(dtype=np.int64)))
print("f32_dot", str(np.dot(f, g)))
print("i32_dot", int(np.dot(i.astype(np.int64), i.astype(np.int64))))
print("mix_dot", repr(float(np.dot(i.astype(np.float64), f.astype(np.float64)))))
print("mix_dot_exact", repr(exact_dot(i.astype(np.float64), f.astype(np.float64))))
np.save(os.path.join(tmp, "want_add.npy"), f + i)
EOF
declare -A NP
while read -r k v; do NP[$k]=$v; done <"$TMP/numpy.txt"

fail=0
line() { printf '%-50s | %-20s | %-20s | %-20s | %s\n' "$@"; }
# check TALLY NUMPY BOUND: "ok" when equal, or within the relative bound (BOUND "exact": equal).
check() {
  python3 -c '
import math, sys
t, n, b = sys.argv[1:]
same = t == n or (b != "exact" and math.isclose(float(t), float(n), rel_tol=float(b), abs_tol=0))
print("ok" if same else "DIFFERS")' "$1" "$2" "$3"
}
# row LABEL NUMPY_KEY BOUND TALLY_ARGS...: runs tally, prints one table row.
# With a "<key>_exact" value, tally (exact mode) must equal it digit for digit.
row() {
  local label=$1 want=${NP[$2]} exact=${NP[$2_exact]:-} bound=$3 got verdict
  shift 3
  got=$("$TALLY" "$@")
  verdict=$(check "$got" "$want" "$bound")
  if [ -n "$exact" ]; then
    if [ "$got" = "$exact" ]; then verdict="$verdict, = exact"; else verdict="$verdict, NOT EXACT"; fail=1; fi
  fi
  [ "${verdict%%,*}" = ok ] || fail=1
  line "$label" "$got" "$want" "${exact:--}" "$verdict (${bound})"
}

echo "tally CLI demo: $("$TALLY" --version), backend $("$TALLY" sum "$TMP/f32.npy" --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["backend"])') (auto)"
echo
line operation tally numpy "exact (fsum)" check
line "$(printf -- '-%.0s' {1..50})" "--------------------" "--------------------" "--------------------" "-----"

IRIS=$DATA/iris.csv
names=(sepal_length sepal_width petal_length petal_width)
for c in 0 1 2 3; do
  row "iris.csv: sum of ${names[$c]} (column $c)" "iris_sum$c" 1e-12 sum "$IRIS" --column $c --skip-rows 1
done
row "iris.csv: sepal_length . petal_length" iris_dot02 1e-12 \
  dot "$IRIS" "$IRIS" --column 0 --column-b 2 --skip-rows 1

DIAB=$DATA/diabetes_data_raw.csv.gz
row "diabetes_data_raw.csv.gz: sum of age (column 0)" diab_sum0 1e-12 sum "$DIAB" --column 0 --delimiter space
row "diabetes_data_raw.csv.gz: sum of bmi (column 2)" diab_sum2 1e-12 sum "$DIAB" --column 2 --delimiter space
row "diabetes_data_raw.csv.gz: bmi . bp" diab_dot23 1e-12 dot "$DIAB" "$DIAB" --column 2 --column-b 3 --delimiter space
row "iris.csv: max of petal_width" iris_max3 exact max "$IRIS" --column 3 --skip-rows 1
row "iris.csv: argmax of petal_width (first index)" iris_argmax3 exact argmax "$IRIS" --column 3 --skip-rows 1
row "diabetes_data_raw.csv.gz: argmin of bmi" diab_argmin2 exact argmin "$DIAB" --column 2 --delimiter space

row "float32[1e6]: sum" f32_sum 1e-6 sum "$TMP/f32.npy"
row "int32[1e6]: sum (exact, int64)" i32_sum exact sum "$TMP/i32.npy"
row "float32[1e6] . float32[1e6]" f32_dot 1e-6 dot "$TMP/f32.npy" "$TMP/g32.npy"
row "int32[1e6] . int32[1e6] (exact, int64)" i32_dot exact dot "$TMP/i32.npy" "$TMP/i32.npy"
row "int32[1e6] . float32[1e6] (promoted to float64)" mix_dot 1e-12 dot "$TMP/i32.npy" "$TMP/f32.npy"

"$TALLY" add "$TMP/f32.npy" "$TMP/i32.npy" -o "$TMP/sum.npy"
add=$(python3 -c '
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
print(f"{got.dtype}{list(got.shape)}", "ok" if got.dtype == want.dtype and np.array_equal(got, want) else "DIFFERS")' \
  "$TMP/sum.npy" "$TMP/want_add.npy")
[ "${add#* }" = ok ] || fail=1
line "float32[1e6] + int32[1e6] -> .npy" "${add% *}" "f + i (float64)" "-" "${add#* } (exact)"

echo "(tally's floating results are exact sums rounded once (its default accuracy): they equal"
echo " math.fsum and the exact rational dot products digit for digit; numpy's pairwise float64"
echo " sums can differ in the last digit, and numpy accumulates float32 in float32, so those rows"
echo " are checked within a relative bound. iris.csv needs --skip-rows 1: its first line holds"
echo " counts and class names, not data)"
echo
if [ $fail -ne 0 ]; then
  echo "demo: some answers differ beyond their bounds" >&2
  exit 1
fi
echo "demo: all answers agree with numpy, and the float64 ones are exactly the correctly rounded values"
