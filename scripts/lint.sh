#!/usr/bin/env bash
# The tree's lint (docs/code-style.md), the way CI runs it:
#   bash scripts/lint.sh              every C++ source of the default build
#   bash scripts/lint.sh FILE...      only these sources (.cc)
# clang-tidy 16 (scripts/deps.sh installs it) with the repository's
# .clang-tidy files, over build/compile_commands.json (configured here if it
# is missing). Headers are checked through the sources that include them.
# A source found clean is not linted again while nothing that decides its
# result changed (scripts/lint-cache.py says what that is); the cache lives
# in $NCCOM_LINT_CACHE (default ~/.cache/nccom/lint) and is shared by every
# clone. NCCOM_LINT_CACHE=off lints everything.
# Exit 0: clean; 1: a finding (each printed as file:line:col: message);
# 2: clang-tidy is missing or the build cannot be configured.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in
  -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
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

cache=${NCCOM_LINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nccom/lint}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# "KEY FILE" per source; KEY is "-" for a source that cannot be keyed.
if [ "$cache" = off ]; then
  printf -- '- %s\n' "${files[@]}" >"$work/keys"
else
  python3 "$root/scripts/lint-cache.py" keys "$root" "$build" "$clang_tidy" "${files[@]}" >"$work/keys"
fi
: >"$work/todo"
cached=0
while read -r key file; do
  if [ "$key" != - ] && [ -e "$cache/$key" ]; then
    cached=$((cached + 1))
  else
    printf '%s %s\n' "$key" "$file" >>"$work/todo"
  fi
done <"$work/keys"

# One clang-tidy per source, so that each source's result is its own: its
# log, and its exit status as the log's last line.
# Headers of this repository (not the build tree's) are checked too.
filter="^$root/(host|emu|plugins|sdk|tools|tests|bench)/"
export clang_tidy build filter work
n=0
while read -r key file; do
  n=$((n + 1))
  printf '%s\0%s\0' "$n" "$file"
done <"$work/todo" |
  xargs -0 -r -n 2 -P "$(nproc)" sh -c \
    '"$clang_tidy" -p "$build" --quiet --header-filter="$filter" "$2" >"$work/$1.log" 2>&1; echo "exit $?" >>"$work/$1.log"' sh

findings=""
failed=0
clean_keys=()
n=0
while read -r key file; do
  n=$((n + 1))
  log="$work/$n.log"
  found=$(grep -E '^/.*:[0-9]+:[0-9]+: (warning|error):' "$log" || true)
  if [ -n "$found" ]; then
    findings+="$found"$'\n'
  elif [ "$(tail -n 1 "$log")" != "exit 0" ]; then
    failed=$((failed + 1))
    [ "$failed" = 1 ] && cp "$log" "$work/first-failure.log"
  else
    clean_keys+=("$key")
  fi
done <"$work/todo"
if [ "$cache" != off ] && [ ${#clean_keys[@]} -gt 0 ]; then
  python3 "$root/scripts/lint-cache.py" store "$cache" "${clean_keys[@]}"
fi

# One line per finding, each once (a header is seen from many sources).
findings=$(printf '%s' "$findings" | sed '/^$/d' | sort -u)
if [ -n "$findings" ]; then
  printf '%s\n' "$findings" | sed "s|^$root/||"
  echo "lint: $(printf '%s\n' "$findings" | wc -l) finding(s) in ${#files[@]} sources; see docs/code-style.md" >&2
  exit 1
fi
if [ "$failed" -ne 0 ]; then
  echo "lint: clang-tidy failed on $failed source(s) without a finding; the first one's output:" >&2
  tail -n 20 "$work/first-failure.log" >&2
  exit 2
fi
echo "lint: ${#files[@]} sources clean ($cached of them unchanged since a clean lint)"
