#!/usr/bin/env bash
# The README's main job: builds ukes and runs a Monte Carlo sweep of SCARA robots tracking a helix
# (randomized payload mass, perturbed and assembled initial joint angles, Baumgarte stabilized),
# then prints the ensemble summary. Results land in demo-out/.
# Usage: scripts/demo.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target ukes  # only what the runner needs

mkdir -p demo-out
"$build/ukes" run client/examples/scara_montecarlo.json \
  --out demo-out/results.json --h5 demo-out/trajectories.h5
echo
echo "Per-system results: demo-out/results.json; trajectories (HDF5): demo-out/trajectories.h5"
