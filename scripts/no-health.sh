#!/usr/bin/env bash
# The build without the health service (the no-health preset: NCCOM_HEALTH=OFF,
# library and tools), and one real job on it: nccom-test's checked all-reduce
# on 4 ranks over 2 emulated hosts, which must pass, say that the service is
# not built, and start none. CI runs it after the default suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset no-health >/dev/null
cmake --build --preset no-health
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# No nccom-ras port: nccom-test then does not look for one.
export NCCOM_RAS_ADDR=
if ! NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT ./build-no-health/bin/nccom-test \
    -r 4 -N 2 -b 8 -e 1M -f 4 -d fp32 --check allr >"$log" 2>&1; then
  cat "$log"
  echo "no-health: the job failed on the build without the health service" >&2
  exit 1
fi
if ! grep -q "built without the health service" "$log"; then
  cat "$log"
  echo "no-health: the ranks did not say that the health service is not built" >&2
  exit 1
fi
if grep -q "health: service on" "$log"; then
  echo "no-health: a health service started in the build without one" >&2
  exit 1
fi
grep -E "^ +[0-9]+ " "$log" | tail -n 2
echo "no-health: the checked all-reduce passed without the health service"
