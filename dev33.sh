#!/usr/bin/env bash
# Device call of the fifty-eighth session: where the library's segment kernel loses against the
# lean one: the library's body with and without tile items (the end-of-groups handshake), the
# lean kernel with and without the library's block_done.
# carry ["build/probe/narrow_seg_probe"] (scripts/narrow-seg-probe.sh)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 200 build/probe/narrow_seg_probe lean > $OUT/lean.txt 2>&1; echo "rc=$? at ${SECONDS}s"
cat $OUT/lean.txt
