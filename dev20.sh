#!/usr/bin/env bash
# Device call of the fifty-seventh session: the narrow segment probe
# (bench/experiments/narrow_seg_probe.cu: the library's integer segment sums of int8, int16,
# uint32, uint64 on equal segments of 200 under lanes 1..32 and 4 / 6 / 8 resident blocks a SM).
# carry ["build/probe/narrow_seg_probe"]
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
timeout 150 build/probe/narrow_seg_probe > $OUT/narrow_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
cat $OUT/narrow_seg_probe.txt | cut -c1-160
