#!/usr/bin/env bash
# dev50.sh (ncu of the exact bfloat16 kernels) then the 8 plan-forcing ctest entries that no
# call of this session reached, -j 8, until END.  carry ["build/carry/bins.tar.xz"]
bash dev50.sh
B=build-gpu; export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/cuda/bin
left=$((${END:-400} - SECONDS)); echo "ctest: ${left}s left at ${SECONDS}s"
timeout $left ctest --test-dir $B/tests -j 8 --timeout 300 --output-on-failure \
  -R '^(ShapesCertifiedSmall|ShapesNarrowColsWhole|ShapesNarrowF16InPlaceWhole|ShapesNarrowF16Widened|ShapesPlanFlat|ShapesPlanFlatSmall|ShapesUncertified|ShapesV1)\.cuda$' > $OUT/ctest.log 2>&1
echo "ctest rc=$? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|Total Test time" $OUT/ctest.log | tail -12
grep -B2 -A10 "Failure" $OUT/ctest.log | head -30
