#!/usr/bin/env bash
# Builds ukes and runs the whole test suite: the README's test command and what CI runs.
# Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

scripts/install-deps.sh
jobs="$(nproc)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUKES_BUILD_TESTS=ON \
  -DUKES_BUILD_BENCHMARKS=ON
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
