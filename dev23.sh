#!/usr/bin/env bash
# Device call of the fifty-seventh session: the narrow segment probe, uint32 sums along equal
# segments and rows of 200 with the library's reader and with a vector's four words summed at
# once (u32w_in). carry ["build/probe/narrow_seg_probe"]
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
timeout 100 build/probe/narrow_seg_probe > $OUT/narrow_seg_probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
cut -c1-60,100-175 $OUT/narrow_seg_probe.txt | sed 's/checked: all equal//'
