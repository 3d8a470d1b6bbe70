#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job —
# the reference runtime doing a real all-reduce across local ranks: 4 ranks
# on 2 emulated hosts (each host's ranks talk directly, the hosts over the
# network plugin on loopback), 8 B to 64 MiB, every result checked.
# Arguments replace the default nccom-test arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
if [ "$#" -eq 0 ]; then
  set -- -r 4 -N 2 -b 8 -e 64M -f 2 -d fp32 --check allr
fi
exec ./build/bin/nccom-test "$@"
