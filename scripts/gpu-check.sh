#!/usr/bin/env bash
# The GPU check, for whoever has an H100/H200: builds ukes with its CUDA module, records what the
# module's kernels use (registers, stack, spills, from the binary), runs the whole test suite with
# the GPU present (the GPU tests then run instead of skipping), runs the GPU benchmarks and peers
# (scripts/bench.sh: ours, PyTorch and JAX + Diffrax where importable) and writes a dated report.
#
#   scripts/gpu-check.sh                 # report in benchmarks/gpu-reports/<UTC time>/
#   scripts/gpu-check.sh --no-bench      # build, resources and tests only
#
# Exits 1 at once, saying so in one line, on a machine without an NVIDIA GPU; otherwise non-zero
# when a step failed (the report says which). Environment: GPU_CHECK_BUILD (default build-gpu),
# GPU_CHECK_JOBS (parallel build jobs, default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."

bench=1
for a in "$@"; do
  case "$a" in
    --no-bench) bench=0 ;;
    *) echo "gpu-check: unknown option $a" >&2 && exit 2 ;;
  esac
done

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi lists none): nothing to check" >&2
  exit 1
fi

build="${GPU_CHECK_BUILD:-build-gpu}"
jobs="${GPU_CHECK_JOBS:-$(nproc)}"
stamp="$(date -u +%Y-%m-%dT%H%MZ)"
out="benchmarks/gpu-reports/$stamp"
mkdir -p "$out"
report="$out/REPORT.md"
failed=()

# step NAME LOG COMMAND...: runs the command with its output in LOG, times it, notes a failure.
step() {
  local name="$1" log="$2"
  shift 2
  echo "gpu-check: $name (log: $out/$log)" >&2
  local start=$SECONDS rc=0
  "$@" >"$out/$log" 2>&1 || rc=$?
  printf '| %s | %s | %d s | `%s` |\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")" \
    $((SECONDS - start)) "$log" >>"$out/steps.md"
  [ $rc -eq 0 ] || failed+=("$name")
  return $rc
}

configure_and_build() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUKES_CUDA=ON \
    -DUKES_BUILD_TESTS=ON -DUKES_BUILD_BENCHMARKS=ON &&
    cmake --build "$build" -j "$jobs"
}

# Registers, stack and spills of every kernel, read from the module's cubins (cuobjdump).
kernel_resources() {
  local cuobjdump=cuobjdump
  command -v cuobjdump >/dev/null || cuobjdump=/usr/local/cuda/bin/cuobjdump
  if [ ! -x "$(command -v "$cuobjdump")" ]; then
    echo "cuobjdump not found (a full CUDA toolkit has it)"
    return 1
  fi
  # "Function <mangled>:" then "REG:r STACK:s SHARED:h LOCAL:l ..." per kernel.
  "$cuobjdump" --dump-resource-usage "$build/libukes_cuda.so" | grep -E "Function |REG:" |
    paste - - |
    sed -E 's/^ *Function ([^:]*):.*REG:([0-9]+) STACK:([0-9]+) SHARED:([0-9]+) LOCAL:([0-9]+).*/\2\t\3\t\5\t\1/' |
    c++filt | sort -k1,1nr
}

# A tiny run on the GPU through the command-line client: which device it found, and that it runs.
first_contact() {
  printf '{"model": "scara", "device": "gpu", "sweep": {"count": 10000}}\n' >"$out/first.json"
  "$build/ukes" run "$out/first.json"
}

: >"$out/steps.md"
step "build (CUDA on)" build.log configure_and_build
if [ ${#failed[@]} -eq 0 ]; then
  step "kernel resources (registers, stack, local memory)" resources.tsv kernel_resources
  step "first run on the GPU (ukes run, device gpu)" first-run.log first_contact
  step "test suite (ctest, GPU tests included)" ctest.log \
    ctest --test-dir "$build" --output-on-failure -j "$jobs"
  if [ "$bench" -eq 1 ]; then
    step "benchmarks and peers (scripts/bench.sh)" bench.log \
      env BENCH_BUILD="$build" scripts/bench.sh --no-install
    [ -f benchmarks/RESULTS.md ] && cp benchmarks/RESULTS.md "$out/RESULTS.md"
    [ -f benchmarks/throughput.png ] && cp benchmarks/throughput.png "$out/throughput.png"
  fi
fi

{
  echo "# GPU check, $stamp"
  echo
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)'),"
  echo "host $(hostname), $(nproc) CPU threads."
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  /usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -n 2
  echo '```'
  echo
  echo "| step | result | time | log |"
  echo "| --- | --- | --- | --- |"
  cat "$out/steps.md"
  echo
  if [ -s "$out/ctest.log" ]; then
    echo "Tests: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"
    echo
  fi
  if [ -s "$out/resources.tsv" ]; then
    echo "Kernels by registers (registers, stack bytes, local bytes, kernel), the ten largest:"
    echo
    echo '```'
    head -n 10 "$out/resources.tsv"
    echo '```'
  fi
  if [ -s "$out/first-run.log" ]; then
    echo
    echo "First run:"
    echo
    echo '```'
    head -n 20 "$out/first-run.log"
    echo '```'
  fi
} >"$report"
rm -f "$out/steps.md"

echo "gpu-check: report in $report" >&2
if [ ${#failed[@]} -ne 0 ]; then
  echo "gpu-check: FAILED: ${failed[*]}" >&2
  exit 1
fi
