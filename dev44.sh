#!/usr/bin/env bash
# Device call: dev43.sh on branch bf16-rounds' binaries (main merged), with memcheck also on
# HalfExactSumsOfCloseAndOutlyingTerms (its data take the whole-round and refused-round paths)
# and ctest ending at 520 s unless END says otherwise. Run 217.
# carry ["build/carry-br/bins.tar.xz"] (CARRY_OUT=build/carry-br/bins.tar.xz NO_CLI=1 scripts/pack-carry.sh)
PACKS=build/carry-br/bins.tar.xz MEMCHECK_FILTER='ShapesNarrowAsync.Bfloat16*:Backends/ShapesNarrow.HalfExact*/cuda_bfloat16' \
  END=${END:-520} exec bash "$(dirname "$0")/dev43.sh"
