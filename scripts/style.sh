#!/usr/bin/env bash
# The tree's style (docs/code-style.md), applied or checked the way CI does:
#   bash scripts/style.sh              reformat every C and C++ file in place
#   bash scripts/style.sh --check      change nothing; exit 1 naming each file
#                                      that differs, with the first lines of
#                                      its diff (CI runs this, scripts/test.sh)
#   bash scripts/style.sh [--check] FILE...   only these files
# Uses clang-format 16 (scripts/deps.sh installs it) with the repository's
# .clang-format, wherever the files are. The frozen net ABI headers
# (sdk/include/nccom/net_v4.h, net_v5.h, net_v6.h) are never reformatted:
# they stay byte for byte as released.
# Exit 0: formatted (or nothing to change); 1: --check found files to
# reformat; 2: clang-format is missing, a file cannot be read or is not
# C or C++.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

check=0
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "style: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done

clang_format=${CLANG_FORMAT:-clang-format-16}
if ! command -v "$clang_format" >/dev/null; then
  echo "style: $clang_format not found; run scripts/deps.sh (it installs clang-format-16)" >&2
  exit 2
fi

frozen='^sdk/include/nccom/net_v[456]\.h$'
if [ ${#files[@]} -eq 0 ]; then
  if ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    echo "style: $root is not a git checkout; name the files to check" >&2
    exit 2
  fi
  mapfile -t files < <(git -C "$root" ls-files -- '*.c' '*.cc' '*.h' | grep -Ev "$frozen" |
                       sed "s|^|$root/|")
fi

# Named files: C and C++ sources only (clang-format would happily rewrite a
# CMake or shell file as if it were C), all refused before any is touched;
# a frozen header named explicitly is left alone.
named=("${files[@]}")
files=()
for f in "${named[@]}"; do
  case "$f" in
    *.c|*.cc|*.cpp|*.h|*.hpp) ;;
    *) echo "style: $f is not a C or C++ file (.c .cc .cpp .h .hpp); nothing was changed" >&2
       exit 2 ;;
  esac
  rel=$(realpath -m "$f"); rel=${rel#"$root"/}
  if [[ "$rel" =~ $frozen ]]; then
    echo "style: $rel is a frozen ABI header, left as released"
    continue
  fi
  files+=("$f")
done

style="--style=file:$root/.clang-format"
for f in "${files[@]}"; do
  if [ ! -r "$f" ]; then
    echo "style: cannot read $f" >&2
    exit 2
  fi
done
jobs=$(nproc)
if [ "$check" = 0 ]; then
  if [ ${#files[@]} -gt 0 ]; then
    printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$jobs" "$clang_format" "$style" -i
  fi
  exit 0
fi
# Which files clang-format would change, many files a process and one
# process a core (--dry-run names each place); then the diff of each of those.
formatted=$(mktemp)
report=$(mktemp)
trap 'rm -f "$formatted" "$report"' EXIT
if [ ${#files[@]} -gt 0 ] &&
   ! printf '%s\0' "${files[@]}" |
     xargs -0 -n 32 -P "$jobs" "$clang_format" "$style" --dry-run >"$report" 2>&1; then
  echo "style: clang-format failed:" >&2
  grep -v 'code should be clang-formatted' "$report" | head -n 20 >&2
  exit 2
fi
mapfile -t differ < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' \
                      "$report" | sort -u)
bad=0
for f in "${differ[@]}"; do
  if ! "$clang_format" "$style" "$f" >"$formatted"; then
    echo "style: clang-format failed on $f" >&2
    exit 2
  fi
  bad=$((bad + 1))
  echo "style: ${f#"$root"/} is not formatted:"
  { diff -u "$f" "$formatted" || true; } | sed -n '3,14p' | sed 's/^/    /'
done
if [ "$check" = 1 ]; then
  if [ "$bad" -gt 0 ]; then
    echo "style: $bad of ${#files[@]} files need formatting; run: bash scripts/style.sh" >&2
    exit 1
  fi
  echo "style: ${#files[@]} files formatted"
fi
