#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job —
# the reference runtime loading libnccom.so exactly as libnrt does.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
exec ./build/bin/nccom-info "$@"
