#!/usr/bin/env bash
# Install every Debian package the default build, its tests and its
# benchmarks can use. Idempotent: only missing packages are installed.
#   bash scripts/deps.sh           install what is missing
#   bash scripts/deps.sh --list    print the package names, one a line (read by
#                                  scripts/check-deps.sh)
# scripts/check-deps.sh fails a build that read a header of a package that is
# neither listed here nor a dependency of one listed here.
set -euo pipefail

packages=(
  # toolchain and build
  build-essential cmake ninja-build pkg-config git binutils file
  ccache                              # every preset compiles through it (cmake/ccache-launch.sh)
  # libraries the build links or includes
  libboost-dev libtomlplusplus-dev libfabric-dev libibverbs-dev
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev            # libFuzzer targets (tests/fuzz)
  # peers: nccom-test under mpirun (tests/tools/nccom-test), the Open MPI and
  # Gloo benchmark programs (bench/coll, bench/bootstrap)
  openmpi-bin libopenmpi-dev libgloo-dev
  # programs tests and benchmarks run
  libfabric-bin                       # fi_info, fi_pingpong (bench/net)
  iperf3                              # bench/net
  graphviz                            # nccom-topo --svg/--png (dot)
  iproute2                            # ip netns: the namespace hosts (tests/e2e/hosts)
  python3                             # scripts/skips.py, scripts/lint-cache.py
  slurm-wlm munge                     # a real Slurm cluster over those hosts (tests/e2e/hosts)
  clang-format-16                     # scripts/style.sh (the style check CI runs)
  clang-tidy-16                       # scripts/lint.sh (the lint CI runs)
)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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
