#!/usr/bin/env bash
# CMAKE_CUDA_COMPILER_LAUNCHER (CMakeLists.txt): runs one nvcc compile (through ccache when CMake
# puts it first) and keeps ptxas's resource report (--resource-usage: registers, stack, spills of
# every function) beside the object as <object>.ptxas, for scripts/kernel_resources.py. Other
# output (warnings, errors) passes through to standard error.
set -uo pipefail
object=""
previous=""
for arg in "$@"; do
  if [ "$previous" = "-o" ]; then object="$arg"; fi
  previous="$arg"
done
report='^(ptxas info|    [0-9]+ bytes stack frame)'
err="$(mktemp)"
"$@" 2>"$err"
rc=$?
if [ -n "$object" ]; then grep -E "$report" "$err" >"$object.ptxas" || true; fi
grep -vE "$report" "$err" >&2 || true
rm -f "$err"
exit "$rc"
