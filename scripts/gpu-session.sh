#!/usr/bin/env bash
# A lent GPU's minutes spent on measurements, not on nvcc. A cold build of the CUDA module takes
# longer than a whole lease (benchmarks/README.md, "Build time"), so the binaries are built here,
# packed with the Debian libraries they link, and run there from the pack:
#
#   scripts/gpu-session.sh pack [BUILD]   # here, after a full build (default build-ci): writes
#                                         # .gpucarry/pack.tar.xz (git ignores .gpucarry/)
#   scripts/gpu-session.sh run [STEP...]  # there, in the checkout's root, with .gpucarry carried
#
# Steps, each under its own time limit, logs in $OUT (the device tool's folder) or else in
# benchmarks/gpu-reports/<UTC time>/, summary.txt first:
#   first       ukes run of 10^5 scara systems on the GPU: which device, that it runs
#   bench_gpu   bench_service, 10^6 scara systems x 2000 RK4 steps in-process and through
#               ukes-server (issue 28: the server within 1.1x of in-process)
#   jit_cache   a user model's kernel compiled by NVRTC, then started from the disk cache, then
#               interpreted: the cache's start-up against no compile at all
#   throughput  ensemble_driver on the built-ins and on interpreted definitions (G steps/s)
#   tests       test_gpu in 16 shards at once (the GPU tests run instead of skipping)
#   bench_cpu   bench_service on the CPU (the server within 1.05x), on that machine's cores, at its
#               default 10^5 duffing systems and at 10^6, with a core left free, and without a
#               job store (--memory-only)
#   lanes       that machine's FP64 peak, and the CPU lanes of every instruction set it has, the
#               per-system path and the Eigen peer on all its cores (issue 30)
# The tree that travels (tracked files and the pack) must stay under the device tool's 64 MiB:
# `pack` says how much of it the pack takes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# The executables and modules the steps run; the pack holds them at their paths in the build.
packed_binaries() {
  local b=$1
  echo "$b/libukes_cuda.so $b/libukes_cpu_sse2.so $b/libukes_cpu_avx2.so $b/libukes_cpu_avx512.so" \
    "$b/ukes $b/ukes-server $b/tests/test_gpu $b/tests/libukes_fake_gpu.so" \
    "$b/benchmarks/bench_service $b/benchmarks/ensemble_driver" \
    "$b/benchmarks/peer_odeint_eigen $b/benchmarks/fp64_peak $b/benchmarks/op_count"
}

pack() {
  local build=${1:-build-ci} stage
  local files
  files=$(packed_binaries "$build")
  # shellcheck disable=SC2086
  ls $files >/dev/null || { echo "gpu-session: build $build first (with the CUDA module)" >&2 && exit 1; }
  stage=$(mktemp -d)
  mkdir -p "$stage/deblib" "$stage/std"
  # Every library they link from the system, but the C library's own (the device has a newer one)
  # and the CUDA toolkit's (the device has its own); libstdc++ apart, used only where the
  # device's is older.
  # shellcheck disable=SC2086
  for f in $files; do ldd "$f" | awk '$3 ~ /^\// {print $3}'; done | sort -u |
    grep -v -e "^$PWD/" -e "^/usr/local/cuda" | while read -r lib; do
    case $(basename "$lib") in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) ;;
      libstdc++* | libgcc_s*) cp -L "$lib" "$stage/std/" ;;
      *) cp -L "$lib" "$stage/deblib/" ;;
    esac
  done
  echo "$PWD $build" >"$stage/paths"
  mkdir -p .gpucarry
  # shellcheck disable=SC2086
  tar cf - $files -C "$stage" deblib std paths | xz -T0 -6 >.gpucarry/pack.tar.xz
  rm -rf "$stage"
  local size tree
  size=$(stat -c %s .gpucarry/pack.tar.xz)
  tree=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s}')
  echo "gpu-session: .gpucarry/pack.tar.xz $((size >> 20)) MiB; with the tracked files" \
    "$(((size + tree) >> 20)) of the 64 MiB that travel"
}

# --- on the device ---------------------------------------------------------------------------

unpack() {
  tar xJf .gpucarry/pack.tar.xz -C .gpucarry || return 1
  local src build
  read -r src build <.gpucarry/paths
  # The binaries find their modules, ukes-server and the examples by the build's absolute paths.
  if [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
  mkdir -p "$build" && cp -a ".gpucarry/$build/." "$build/"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  echo "$(nproc) CPU threads: $(lscpu | grep 'Model name' | cut -c1-80)"
  ldd "$build/ukes" "$build/libukes_cuda.so" "$build/tests/test_gpu" | grep "not found" ||
    echo "every library found"
}

first() {
  printf '{"model": "scara", "device": "gpu", "sweep": {"count": 100000}}\n' >/tmp/first.json
  "$B/ukes" run /tmp/first.json
}

bench_gpu() {
  "$B/benchmarks/bench_service" --model scara --device gpu --systems 1000000 --repetitions 3
}

jit_cache() {
  export UKES_JIT_CACHE=/tmp/ukes-jit-cache
  rm -rf "$UKES_JIT_CACHE"
  local m run start
  for m in two_rod_pendulum double_pendulum_cartesian; do
    printf '{"model": "%s", "device": "gpu", "integrator": {"method": "rk4", "t_end": 0.1, "dt": 1e-3}, "sweep": {"count": 1000}}\n' \
      "$PWD/client/examples/models/$m.json" >/tmp/user.json
    for run in compile cache cache interpreted; do
      start=$(date +%s.%N)
      if [ "$run" = interpreted ]; then
        UKES_GPU_JIT=0 "$B/ukes" run /tmp/user.json 2>&1 | grep -E "GPU kernel|elapsed|error"
      else
        "$B/ukes" run /tmp/user.json 2>&1 | grep -E "GPU kernel|elapsed|error"
      fi
      echo "$m, $run: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {print e - s}') s of wall time"
    done
  done
}

throughput() {
  local m n
  for m in scara duffing two_rod_pendulum four_bar swarm; do
    n=131072
    case $m in four_bar | swarm) n=65536 ;; esac
    "$B/benchmarks/ensemble_driver" --model "$m" --device gpu --n "$n" --method rk4 --steps 200 \
      --dt 1e-3 --repetitions 3 | tail -n 1
    UKES_GPU_JIT=0 "$B/benchmarks/ensemble_driver" --definition "client/examples/models/$m.json" \
      --device gpu --n "$n" --method rk4 --steps 200 --dt 1e-3 --repetitions 3 | tail -n 1
  done
}

tests() {
  local shards=16 k
  for ((k = 0; k < shards; k++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k "$B/tests/test_gpu" >"/tmp/shard$k.log" 2>&1 &
  done
  wait
  cat /tmp/shard*.log | grep -E "^\[  (PASSED|FAILED|SKIPPED) " | sort | uniq -c
  for ((k = 0; k < shards; k++)); do grep -q "FAILED" "/tmp/shard$k.log" && cat "/tmp/shard$k.log"; done
  echo "the slowest:"
  grep -h "^\[       OK \]" /tmp/shard*.log | sed -E 's/.*\] (.*) \(([0-9]+) ms\)/\2 \1/' |
    sort -n -r | head -n 15
  ! grep -q "^\[  FAILED  \]" /tmp/shard*.log
}

bench_cpu() {
  "$B/benchmarks/bench_service" --repetitions 3
  "$B/benchmarks/bench_service" --repetitions 3 --systems 1000000
  # A core left to the server's own threads: what the pipeline hides when they have one.
  "$B/benchmarks/bench_service" --repetitions 3 --threads "$(($(nproc) - 1))"
  # No job store: what storing the results costs there.
  "$B/benchmarks/bench_service" --repetitions 3 --memory-only
}

# benchmarks/lanes_table.py: each variant and the peer in turn, so that a busy moment falls on all
# of them, every final state checked, each variant's share of the peak.
lanes() {
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"
  python3 benchmarks/lanes_table.py --build "$B" --systems 32768 --threads "$(nproc)" --runs 3
}

run_steps() {
  out=${OUT:-benchmarks/gpu-reports/$(date -u +%Y-%m-%dT%H%MZ)}
  mkdir -p "$out"
  summary=$out/summary.txt
  echo "gpu-session at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u)" | tee "$summary"
  export LD_LIBRARY_PATH=$PWD/.gpucarry/deblib:/usr/local/cuda/lib64
  timed unpack 60 || exit 1
  read -r _ B <.gpucarry/paths
  if grep -q "GLIBCXX\|CXXABI" "$out/unpack.log"; then
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.gpucarry/std
    echo "the device's libstdc++ is older: Debian's taken" | tee -a "$summary"
  fi
  # Every step with its time limit, in the order a plain `run` takes them.
  local -A limit=([first]=40 [bench_gpu]=120 [jit_cache]=90 [throughput]=90 [tests]=200
    [bench_cpu]=90 [lanes]=90)
  local step steps=("$@")
  [ ${#steps[@]} -gt 0 ] || steps=(first bench_gpu jit_cache throughput tests bench_cpu lanes)
  for step in "${steps[@]}"; do
    if [ -n "${limit[$step]:-}" ]; then
      timed "$step" "${limit[$step]}"
    else
      echo "gpu-session: no step $step" | tee -a "$summary"
    fi
  done
  echo "total $SECONDS s" | tee -a "$summary"
}

# timed STEP LIMIT: the step's output in its log, its exit code and time in the summary.
timed() {
  local start=$SECONDS rc=0
  echo "== $1 (limit $2 s), at $start s" | tee -a "$summary"
  timeout -k 5 "$2" bash -c "$(declare -f "$1"); B=$B; $1" >"$out/$1.log" 2>&1 || rc=$?
  echo "-- $1: rc $rc in $((SECONDS - start)) s" | tee -a "$summary"
  return $rc
}

B="build-ci"
case ${1:-} in
  pack) pack "${2:-build-ci}" ;;
  run) shift && run_steps "$@" ;;
  *) sed -n '2,20p' "$0" >&2 && exit 2 ;;
esac
