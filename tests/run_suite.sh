#!/bin/sh
# Runs one GoogleTest binary over many tests (a ctest suite: the shape tests again under
# another plan or path) and exits 77, the suites' SKIP_RETURN_CODE, only when it succeeded
# with no test passed (every one skipped: no GPU), 1 when its filter matched no test;
# otherwise with its own exit status.
# (SKIP_REGULAR_EXPRESSION "[  SKIPPED ]" on a suite marked it skipped, whatever its exit
# status, as soon as any one of its tests skipped: CMake's rule, "regardless of the process
# exit code", which would have hidden its failures.)
#   usage: run_suite.sh BINARY ARGS...
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
# (GoogleTest colours its lines when it thinks it writes to a terminal, as under mpirun)
plain=$(printf '%s\n' "$out" | sed -E 's/\x1b\[[0-9;]*m//g')
if printf '%s\n' "$plain" | grep -q '^\[==========\] 0 tests from'; then
  echo "run_suite.sh: no test matched the filter" >&2
  exit 1
fi
if [ "$rc" -eq 0 ] && printf '%s\n' "$plain" | grep -q '^\[  PASSED  \] 0 tests\.'; then
  exit 77
fi
exit "$rc"
