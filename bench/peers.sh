#!/usr/bin/env bash
# Installs the benchmarks' peers when they are missing: Open MPI and Gloo
# (bench/coll, bench/bootstrap), iperf3 and libfabric's fi_pingpong
# (bench/net). Idempotent: present packages are left alone. Not root: says
# what is missing (those columns then stay empty) and succeeds.
set -euo pipefail

packages=(openmpi-bin libopenmpi-dev libgloo-dev iperf3 libfabric-bin)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: missing packages: ${missing[*]} (run as root or apt-get install them);" \
       "their columns stay empty" >&2
  exit 0
fi
echo "bench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
