#!/usr/bin/env bash
# Renders the charts a report left in DIR: DIR/manifest lists "data.csv|title"
# lines; each becomes data.svg next to its data (nccom_bench_chart).
#
#   bench/chart/render.sh BUILD_DIR DIR
set -euo pipefail
build=$1
dir=$2
chart=$build/bin/nccom_bench_chart
if [ ! -x "$chart" ]; then
  echo "bench: no charts: $chart is missing (cmake --build $build --target nccom_bench_chart)" >&2
  exit 0
fi
[ -f "$dir/manifest" ] || exit 0
while IFS='|' read -r data title; do
  [ -n "$data" ] || continue
  svg=${data%.csv}.svg
  if "$chart" --title "$title" --out "$svg" "$data"; then
    echo "bench: chart $svg" >&2
  fi
done <"$dir/manifest"
