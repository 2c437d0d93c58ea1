export PREBUILT=build/carry/bins.tar.xz
CTEST_JOBS=16 CTEST_REGEX='ShapesNarrow|ShapesPlan|BoolBytes' OUT=$OUT/a scripts/device-check.sh tests > $OUT/tests.txt 2>&1
BENCH_ARGS='--only shapes-narrow --max-log2 26' OUT=$OUT/m timeout 220 scripts/device-check.sh bench > $OUT/bench-log.txt 2>&1
rm -f $OUT/m/h200.png $OUT/m/bench.csv
TALLY_SHAPES_PLAN=half_extreme_cols=1 SANITIZE_FILTER='Backends/ShapesNarrow.HalfExtremesOfSpecialValuesInWholeVectors/cuda_float16:Backends/ShapesNarrow.HalfExtremesOfSpecialValuesInWholeVectors/cuda_bfloat16:Backends/ShapesNarrow.ColumnHalfExtremesOfSpecialValuesAcrossRuns/cuda_float16' OUT=$OUT/s timeout 150 scripts/device-check.sh sanitize > $OUT/san.txt 2>&1
ls -R $OUT
