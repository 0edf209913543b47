#!/usr/bin/env bash
# Builds ukes, runs each libFuzzer target for UKES_FUZZ_SECONDS (default 15), then the test suite,
# C++ and Python (client/python/tests through ctest), twice: with the host emulation of the GPU
# module as the GPU, then as it is. The README's test command and what CI runs. The plain ctest
# comes last so that its summary closes the output.
# Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
# Where CI's time goes (.ci/run has 90 minutes; a cold ccache costs most: benchmarks/README.md,
# "Build time").
took() { echo "test.sh: $1 at ${SECONDS} s"; }

scripts/install-deps.sh
took "dependencies installed"
jobs="$(nproc)"
# ccache (CMakeLists.txt) keyed on paths relative to this tree: a fresh clone elsewhere (CI's)
# reuses what an earlier build of the same sources compiled. Always this tree, never an inherited
# value: a base_dir above another checkout stores entries with this clone's absolute paths, which
# no other clone can hit.
export CCACHE_BASEDIR="$PWD"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUKES_BUILD_TESTS=ON \
  -DUKES_BUILD_BENCHMARKS=ON
cmake --build "$build" -j "$jobs"
took "built"
# The libFuzzer targets, briefly (their own clang build in build-fuzz; see tests/fuzz/README.md).
scripts/fuzz.sh "${UKES_FUZZ_SECONDS:-15}"
took "fuzzed"
# The suite again with the host emulation of the GPU module as this machine's GPU
# (kernels/backend/host_gpu/README.md): as on a machine with a GPU, every test must pin its device
# or compare across devices within its documented tolerance. The GPU tests themselves run on it
# in the main run (HostGpu: tests); tests that use no device (NVRTC compiles, CPU runs of
# generated models) run once.
host_gpu="$(cd "$build" && pwd)/libukes_host_gpu.so"
if [[ -f "$host_gpu" ]]; then
  UKES_CUDA_MODULE="$host_gpu" ctest --test-dir "$build" --output-on-failure -j "$jobs" \
    -E '^HostGpu:|GpuAgreement|GpuUserModels|GpuProjection|GpuControl|GpuStiff|GpuEvent|^Gpu(Chunks|Failures|Service|Cancel|Context|Devices)\.|Nvrtc(Compile|ServoDerivatives|Stiff|Events)|GeneratedModelRun'
  took "tested on the host emulation of the GPU module"
fi
ctest --test-dir "$build" --output-on-failure -j "$jobs"
