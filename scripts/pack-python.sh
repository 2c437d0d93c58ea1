#!/usr/bin/env bash
# Builds the Python module tally._tally here for another Python (default the device's 3.12, from
# pyenv) against ./build's libtally.a (sm_90), and packs it into build/carry-py/py.tar.xz for
# scripts/device-check.sh python with PREBUILT_PY=build/carry-py/py.tar.xz: the device call then
# runs the pytest suite without building the whole library for the module (which did not end
# within a 580 s call: run 129). The compile and link commands are ./build's own for the
# module and nanobind (ninja -t commands), with the other Python's headers and suffix.
#   usage: scripts/pack-python.sh [PYTHON]   (needs ./build configured with TALLY_BUILD_PYTHON=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-/root/.pyenv/versions/3.12.1/bin/python3}
here_inc=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
here_ext=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
inc=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ext=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
[[ -f "$inc/Python.h" ]] || { echo "pack-python: $PY has no Python.h under $inc" >&2; exit 1; }
so=python/tally/_tally$here_ext
ninja -C build src/libtally.a >/dev/null
o=py-other  # under build/: this Python's objects and module
rm -rf "build/$o" && mkdir -p "build/$o"
# module.cpp, nanobind's sources, the archive and the link: relative output paths moved to $o/
ninja -C build -t commands "$so" | grep -vE "nvcc|src/CMakeFiles/tally.dir|/bin/ar .*libtally" |
  sed -e "s#-I$here_inc #-I$inc #g" -e "s# python/# $o/python/#g" -e "s#_tally$here_ext#_tally$ext#g" >"build/$o/commands.sh"
grep -q "$inc" "build/$o/commands.sh" || { echo "pack-python: the commands name no $inc" >&2; exit 1; }
(cd build && while IFS= read -r cmd; do
   out=$(sed -nE 's/.* -o ([^ ]+).*/\1/p' <<<"$cmd")
   [[ -n "$out" ]] && mkdir -p "$(dirname "$out")"
   eval "$cmd" || exit 1
 done <"$o/commands.sh")
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tally" build/carry-py && cp "build/$o/python/tally/_tally$ext" "$t/tally/"
XZ_OPT=-9 tar -C "$t" -cJf build/carry-py/py.tar.xz tally
ls -l build/carry-py/py.tar.xz
