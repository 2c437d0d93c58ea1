#!/usr/bin/env bash
# Packs one tally_bench binary (stripped) into DIR/bench.tar.xz, a folder to carry for
# scripts/ab-bench.sh.   usage: scripts/ab-pack.sh BENCH DIR   (e.g. build/bench/tally_bench build/carry-a)
set -euo pipefail
[[ $# -eq 2 && -x $1 ]] || { echo "usage: scripts/ab-pack.sh BENCH DIR (BENCH an executable)" >&2; exit 2; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
strip -o "$t/tally_bench" "$1"
mkdir -p "$2"
XZ_OPT=-9 tar -C "$t" -cJf "$2/bench.tar.xz" tally_bench
ls -l "$2/bench.tar.xz"
