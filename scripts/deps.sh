#!/usr/bin/env bash
# Install the Debian packages nccom needs to build, test and benchmark.
# Idempotent: only missing packages are installed; safe to run repeatedly.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git binutils file
  libboost-dev libtomlplusplus-dev libfabric-dev libfabric-bin libibverbs-dev
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev            # libFuzzer targets (tests/fuzz)
  graphviz                            # nccom-topo --svg/--png (dot)
  openmpi-bin                         # nccom-test under mpirun (tests/tools_nccom_test)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}" >&2
  echo "deps: run this script as root (or install them with apt-get) and retry" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
