#!/usr/bin/env bash
# Installs the Debian 12 packages ukes builds, tests and runs with. Idempotent: does nothing when
# everything is present. libssl-dev and zlib1g-dev (TLS; binary results' compression) are
# deliberately not named (gRPC pulls them; naming them would upgrade openssl). clang and
# libclang-rt-14-dev (libFuzzer and the sanitizer runtimes: only a recommendation of clang's
# packages) build the fuzz targets of scripts/fuzz.sh.
# openssl (the command; Debian installs it with ca-certificates) makes the TLS tests' certificates.
set -euo pipefail

packages=(
  cmake ninja-build pkg-config g++ ccache
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc grpc-proto
  libgtest-dev libbenchmark-dev libhdf5-dev nlohmann-json3-dev libcli11-dev libeigen3-dev
  libsqlite3-dev libopenmpi-dev openmpi-bin libxsimd-dev
  python3-grpcio python3-protobuf python3-numpy python3-h5py python3-pytest python3-tqdm
  python3-xarray python3-h5netcdf python3-sympy python3-matplotlib python3-yaml python3-distributed
  clang libclang-rt-14-dev openssl
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
