#!/usr/bin/env bash
# Device call of the fifty-eighth session: narrow_seg_probe with the library's group items on
# 64-bit lane partials (v2::fold_span_sum) beside the lean kernels ("lean"), then the
# library's body at 2, 4 and 8 lanes (no argument).
# carry ["build/probe/narrow_seg_probe"] (scripts/narrow-seg-probe.sh)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 200 build/probe/narrow_seg_probe lean > $OUT/lean.txt 2>&1; echo "rc=$? at ${SECONDS}s"
timeout 200 build/probe/narrow_seg_probe > $OUT/few.txt 2>&1; echo "rc=$? at ${SECONDS}s"
grep -E 'read kernel|segs G|lean oneshot check 0 G  [48] minb 4|lean persist check 0 G  [248] minb 4 U 4' $OUT/lean.txt
cat $OUT/few.txt
