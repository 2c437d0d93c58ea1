#!/usr/bin/env bash
# Device call of the fifty-seventh session: the narrow segment probe: each type's sums along equal
# segments of 200 at 2, 4 and 8 lanes, with and without the L2 prefetch of the next item's
# segment (rows_body PF; run 197: uint32 with u32w_in). carry ["build/probe/narrow_seg_probe"]
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
timeout 100 build/probe/narrow_seg_probe > $OUT/narrow_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
cut -c1-60,100-175 $OUT/narrow_seg_probe.txt | sed 's/checked: all equal//'
