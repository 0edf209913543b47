#!/usr/bin/env bash
# The peer comparison in one command: installs what it needs, builds a Release tree (build-bench)
# and runs benchmarks/compare.py, which runs our ensemble driver and every peer on the same
# systems and writes benchmarks/RESULTS.md and benchmarks/throughput.png.
#
#   scripts/bench.sh            # full run (about 15 minutes on a 2-core machine)
#   scripts/bench.sh --quick    # smoke run: few sizes, one repetition
#   scripts/bench.sh --threads 4 --no-install
# Environment: BENCH_JOBS (parallel build jobs, default nproc), BENCH_BUILD (default build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

install=1
args=()
for a in "$@"; do
  case "$a" in
    --no-install) install=0 ;;
    *) args+=("$a") ;;
  esac
done
# Machines without apt (the lent GPU machines) bring their own toolchain and Python libraries.
if ! command -v apt-get >/dev/null; then install=0; fi

if [ "$install" -eq 1 ]; then
  scripts/install-deps.sh
  # What the peers need beyond the build: Boost.Odeint (header-only), SciPy, matplotlib for the
  # plot. Installed the way install-deps.sh does it.
  extra=(libboost-dev libeigen3-dev python3-numpy python3-scipy python3-matplotlib)
  missing=()
  for p in "${extra[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "bench: installing ${missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# The CUDA module only where a GPU can run it (it takes long to compile and nothing here uses it).
cuda=OFF
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; fi
build="${BENCH_BUILD:-build-bench}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUKES_CUDA="$cuda" \
  -DUKES_BUILD_TESTS=OFF -DUKES_BUILD_BENCHMARKS=ON >/dev/null
ninja -C "$build" -j "${BENCH_JOBS:-$(nproc)}" ensemble_driver bench_micro op_count \
  $(ninja -C "$build" -t targets all 2>/dev/null | grep -q '^peer_odeint_eigen:' && echo peer_odeint_eigen)

# Debian's Python has numpy and SciPy; elsewhere the first python3 on PATH.
python=/usr/bin/python3
if ! "$python" -c "import numpy" 2>/dev/null; then python="$(command -v python3)"; fi
exec "$python" benchmarks/compare.py --build "$build" "${args[@]}"
