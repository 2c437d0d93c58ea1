#!/usr/bin/env bash
# Packs the locally built GPU test and benchmark binaries (sm_90, from ./build) with their CTest
# files into build/carry/bins.tar.xz, for scripts/device-check.sh with PREBUILT=build/carry/bins.tar.xz:
# the device call then skips its ~150 s build. Absolute paths in the CTest files become @B@ (the
# build folder) and @SRC@ (the repository root); device-check.sh puts its own back.
# The steps tests (the tally_tests suites), sanitize, bench and cli (the tally command, for the
# CLI pytest files) can use a prebuilt tree.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=tools/cli/tally; [[ "${NO_CLI:-}" == 1 ]] && cli=  # (NO_CLI=1, below: a build without CLI11/fmt has no target)
ninja -C build tally_tests tally_bench $cli >/dev/null
root=$PWD
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests" "$t/bench" "$t/tools/cli"
strip -o "$t/tests/tally_tests" build/tests/tally_tests
strip -o "$t/bench/tally_bench" build/bench/tally_bench
[[ -n "$cli" ]] && strip -o "$t/tools/cli/tally" build/tools/cli/tally
for f in build/tests/CTestTestfile.cmake "build/tests/tally_tests[1]_include.cmake" "build/tests/tally_tests[1]_tests.cmake"; do
  # only the tally_tests suites: the CLI, MPI and NCCL subfolders are not carried
  sed -e "s#$root/build#@B@#g" -e "s#$root#@SRC@#g" -e '/^subdirs(/d' "$f" >"$t/tests/$(basename "$f")"
done
py=
if [[ "${1:-}" == --python ]]; then  # the Python module too (scripts/pack-python.sh), as py/tally/
  scripts/pack-python.sh >/dev/null
  mkdir -p "$t/py" && tar -C "$t/py" -xJf build/carry-py/py.tar.xz
  py=py
fi
out=${CARRY_OUT:-build/carry/bins.tar.xz}  # (CARRY_OUT: another path, e.g. a branch's binaries beside main's)
mkdir -p "$(dirname "$out")"
# A 256 MiB window finds the device code the binaries (and the module) share: 185 MB of
# binaries and the 59 MB module pack into ~51 MB, under the device tool's 64 MiB carry.
# (Each binary is ~60 MB, so the module sits next to tally_tests in the archive.)
# ONLY=tests or ONLY=bench: that binary alone (with the CTest files), when the three no longer
# fit the carry beside the working tree (forty-second session: 61 MB with the native 16- to
# 64-bit integer kernels)
parts="tests/tally_tests $py tests/*.cmake bench tools"
[[ "${ONLY:-}" == tests ]] && parts="tests/tally_tests $py tests/*.cmake"
[[ "${ONLY:-}" == bench ]] && parts="bench"
# NO_CLI=1: not the tally command (the dev calls that run no CLI tests; fifty-seventh session:
# 56 MB with it, beside a probe binary and the 11 MB tree, passed the 64 MiB)
[[ "${NO_CLI:-}" == 1 ]] && parts="${parts/ tools/}"
(cd "$t" && tar -cf - $parts) | xz --lzma2=preset=9,dict=256MiB -T1 >"$out"
ls -l "$out"
