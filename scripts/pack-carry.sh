#!/usr/bin/env bash
# Packs the locally built GPU test and benchmark binaries (sm_90, from ./build) with their CTest
# files into build/carry/bins.tar.xz, for scripts/device-check.sh with PREBUILT=build/carry/bins.tar.xz:
# the device call then skips its ~150 s build. Absolute paths in the CTest files become @B@ (the
# build folder) and @SRC@ (the repository root); device-check.sh puts its own back.
# Only the steps tests (the tally_tests suites), sanitize and bench can use a prebuilt tree.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build tally_tests tally_bench >/dev/null
root=$PWD
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests" "$t/bench"
strip -o "$t/tests/tally_tests" build/tests/tally_tests
strip -o "$t/bench/tally_bench" build/bench/tally_bench
for f in build/tests/CTestTestfile.cmake "build/tests/tally_tests[1]_include.cmake" "build/tests/tally_tests[1]_tests.cmake"; do
  # only the tally_tests suites: the CLI, MPI and NCCL subfolders are not carried
  sed -e "s#$root/build#@B@#g" -e "s#$root#@SRC@#g" -e '/^subdirs(/d' "$f" >"$t/tests/$(basename "$f")"
done
mkdir -p build/carry
XZ_OPT=-9 tar -C "$t" -cJf build/carry/bins.tar.xz tests bench  # -9: a 64 MiB window finds the device code the two binaries share
ls -l build/carry/bins.tar.xz
