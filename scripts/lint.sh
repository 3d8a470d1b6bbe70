#!/usr/bin/env bash
# The tree's lint (docs/code-style.md), the way CI runs it:
#   bash scripts/lint.sh              every C++ source of the default build
#   bash scripts/lint.sh FILE...      only these sources (.cc)
# clang-tidy 16 (scripts/deps.sh installs it) with the repository's
# .clang-tidy files, over build/compile_commands.json (configured here if it
# is missing). Headers are checked through the sources that include them.
# Exit 0: clean; 1: a finding (each printed as file:line:col: message);
# 2: clang-tidy is missing or the build cannot be configured.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in
  -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac

clang_tidy=${CLANG_TIDY:-clang-tidy-16}
if ! command -v "$clang_tidy" >/dev/null; then
  echo "lint: $clang_tidy not found; run scripts/deps.sh (it installs clang-tidy-16)" >&2
  exit 2
fi
build=${LINT_BUILD_DIR:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  if ! cmake --preset default >/dev/null; then
    echo "lint: cmake --preset default failed; fix the configure step first" >&2
    exit 2
  fi
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  # Every C++ translation unit of the build that lives in the repository
  # (generated files under build/ are not ours to lint).
  mapfile -t files < <(sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/\1/p' "$build/compile_commands.json" |
                       grep "^$root/" | grep -v "^$root/build" | grep '\.cc$' | sort -u)
fi

jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Headers of this repository (not the build tree's) are checked too.
filter="^$root/(host|emu|plugins|sdk|tools|tests|bench)/"
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 8 "$clang_tidy" -p "$build" --quiet --header-filter="$filter" \
    >"$log" 2>/dev/null || status=$?
# One line per finding, each once (a header is seen from many sources).
findings=$(grep -E '^/.*:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u || true)
if [ -n "$findings" ]; then
  printf '%s\n' "$findings" | sed "s|^$root/||"
  echo "lint: $(printf '%s\n' "$findings" | wc -l) finding(s) in ${#files[@]} sources; see docs/code-style.md" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "lint: clang-tidy failed (exit $status) without a finding; run it on one file to see why:" >&2
  echo "  $clang_tidy -p $build FILE" >&2
  exit 2
fi
echo "lint: ${#files[@]} sources clean"
