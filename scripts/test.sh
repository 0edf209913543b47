#!/usr/bin/env bash
# Builds ukes, runs each libFuzzer target for UKES_FUZZ_SECONDS (default 15), then the whole test
# suite, C++ and Python (client/python/tests through ctest): the README's test command and what CI
# runs. ctest comes last so that its summary closes the output.
# Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

scripts/install-deps.sh
jobs="$(nproc)"
# ccache (CMakeLists.txt) keyed on paths relative to this tree: a fresh clone elsewhere (CI's)
# reuses what an earlier build compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUKES_BUILD_TESTS=ON \
  -DUKES_BUILD_BENCHMARKS=ON
cmake --build "$build" -j "$jobs"
# The libFuzzer targets, briefly (their own clang build in build-fuzz; see tests/fuzz/README.md).
scripts/fuzz.sh "${UKES_FUZZ_SECONDS:-15}"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
