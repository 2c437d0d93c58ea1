#!/usr/bin/env bash
# Device call of the fifty-eighth session: the lean segment-sum kernels of
# bench/experiments/narrow_seg_probe.cu ("lean") beside the library's rows_body.
# carry ["build/probe/narrow_seg_probe"] (scripts/narrow-seg-probe.sh)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 200 build/probe/narrow_seg_probe lean > $OUT/lean.txt 2>&1; echo "rc=$? at ${SECONDS}s"
cat $OUT/lean.txt
