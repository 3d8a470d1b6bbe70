#!/usr/bin/env bash
# Fails when the build read a header under /usr that belongs to a package
# scripts/deps.sh does not install — neither one it lists nor one of their
# dependencies (Depends and Pre-Depends, followed to the end, alternatives and
# virtual packages included when installed) — or to no package at all (a file
# put there by hand). Such a build works here and fails on a new machine.
#
#   bash scripts/check-deps.sh [BUILD_DIR]      the build's Ninja dependency
#                                              log (default: build)
#   bash scripts/check-deps.sh --deps-log FILE  a log in `ninja -t deps` form
#                                              instead (lines holding one path)
#   --packages "A B ..."                        the closure's roots instead of
#                                              `scripts/deps.sh --list`
#
# Reads only the Debian package database and the log: a few seconds.
# Exit 0: every header is accounted for; 1: some are not (named below);
# 2: the log or the package database could not be read.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
deps_log=""
roots=""
while [ $# -gt 0 ]; do
  case "$1" in
    --deps-log) deps_log=${2:?--deps-log needs a file}; shift 2 ;;
    --packages) roots=${2?--packages needs a list}; shift 2 ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "check-deps: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build_dir=$1; shift ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The headers: every absolute path under /usr in the log, normalised
#    (ninja records gcc's /usr/lib/gcc/.../../../../include/... spellings).
if [ -z "$deps_log" ]; then
  if [ ! -f "$build_dir/.ninja_deps" ]; then
    echo "check-deps: $build_dir/.ninja_deps not found: build first (cmake --build --preset default)," \
         "or name the build directory" >&2
    exit 2
  fi
  deps_log=$work/deps.log
  if ! ninja -C "$build_dir" -t deps >"$deps_log" 2>"$work/ninja.err"; then
    echo "check-deps: ninja -C $build_dir -t deps failed: $(head -c 300 "$work/ninja.err")" >&2
    exit 2
  fi
  source_name="the build in $build_dir"
else
  if [ ! -r "$deps_log" ]; then
    echo "check-deps: cannot read the dependency log $deps_log" >&2
    exit 2
  fi
  source_name=$deps_log
fi
awk '{ sub(/^[ \t]+/, ""); sub(/[ \t]+$/, "") } /^\/usr\/[^ \t]*$/ { print }' "$deps_log" |
  sort -u | xargs -r realpath -s -m -- | sort -u >"$work/headers"
header_count=$(wc -l <"$work/headers")

# 2. Their packages. dpkg-query -S names the owners of each path it knows
#    ("pkg[:arch][, pkg...]: path"); a path reached through a symlink (an
#    alternative, /usr/include/x86_64-linux-gnu/mpi) is tried resolved.
owners() {  # paths on stdin -> "pkg<TAB>path" lines; unknown paths -> $work/unowned
  xargs -r dpkg-query -S -- 2>/dev/null |
    awk '/^diversion by / { next }
         { i = index($0, ": "); if (!i) next
           path = substr($0, i + 2); n = split(substr($0, 1, i - 1), p, /, /)
           for (k = 1; k <= n; k++) { sub(/:.*/, "", p[k]); print p[k] "\t" path } }' || true
}
owners <"$work/headers" >"$work/owned"
cut -f2 "$work/owned" | sort -u >"$work/owned_paths"
comm -23 "$work/headers" "$work/owned_paths" >"$work/unowned_raw"
: >"$work/unowned"
while IFS= read -r path; do
  real=$(realpath -e -- "$path" 2>/dev/null || true)
  line=""
  if [ -n "$real" ] && [ "$real" != "$path" ]; then
    line=$(printf '%s\n' "$real" | owners | head -n1)
  fi
  if [ -n "$line" ]; then
    printf '%s\t%s\n' "${line%%$'\t'*}" "$path" >>"$work/owned"
  else
    printf '%s\n' "$path" >>"$work/unowned"
  fi
done <"$work/unowned_raw"

# 3. The closure of what deps.sh installs, over the installed packages.
if [ -z "$roots" ]; then
  roots=$(bash scripts/deps.sh --list)
fi
if ! dpkg-query -W -f='${Package}\t${db:Status-Abbrev}\t${Depends}, ${Pre-Depends}\t${Provides}\n' \
     >"$work/db" 2>"$work/dpkg.err"; then
  echo "check-deps: cannot read the package database: $(head -c 300 "$work/dpkg.err")" >&2
  exit 2
fi
printf '%s\n' $roots | awk -v db="$work/db" '
  BEGIN {
    FS = "\t"
    while ((getline line < db) > 0) {
      split(line, f, "\t")
      if (f[2] !~ /^.i/) continue                      # installed ones only
      installed[f[1]] = 1; deps[f[1]] = f[3]
      n = split(f[4], pv, /, */)
      for (k = 1; k <= n; k++) { v = pv[k]; sub(/[ (:].*/, "", v); if (v != "") provider[v] = provider[v] " " f[1] }
    }
  }
  { if ($0 != "") queue[++tail] = $0 }
  END {
    head = 1
    while (head <= tail) {
      p = queue[head++]
      if (p in seen) continue
      seen[p] = 1
      if (!(p in installed)) {                         # a virtual name: whoever provides it
        n = split(provider[p], pr, " ")
        for (k = 1; k <= n; k++) queue[++tail] = pr[k]
        continue
      }
      n = split(deps[p], alt, /[,|]/)
      for (k = 1; k <= n; k++) {
        d = alt[k]; gsub(/^[ \t]+/, "", d); sub(/[ (:].*/, "", d)
        if (d != "" && !(d in seen) && ((d in installed) || (d in provider))) queue[++tail] = d
      }
    }
    for (p in seen) if (p in installed) print p
  }' | sort -u >"$work/closure"

# 4. The verdict.
sort -u "$work/owned" >"$work/owned_sorted"
awk -F '\t' -v closure="$work/closure" '
  BEGIN { while ((getline p < closure) > 0) ok[p] = 1 }
  { if ($2 in byfile) byfile[$2] = byfile[$2] " " $1; else byfile[$2] = $1
    if ($1 in ok) good[$2] = 1 }
  END { for (f in byfile) if (!(f in good)) print byfile[f] "\t" f }' "$work/owned_sorted" |
  sort >"$work/outside"

if [ ! -s "$work/outside" ] && [ ! -s "$work/unowned" ]; then
  packages=$(cut -f1 "$work/owned_sorted" | sort -u | wc -l)
  echo "check-deps: ok — $header_count headers under /usr read by $source_name, all from" \
       "$packages packages that scripts/deps.sh installs or pulls in ($(wc -l <"$work/closure") in its closure)"
  exit 0
fi

echo "check-deps: $source_name read headers that a new machine does not get from scripts/deps.sh:"
if [ -s "$work/outside" ]; then
  awk -F '\t' '{ n[$1]++; if (!($1 in first)) first[$1] = $2 }
    END { for (p in n) printf "  package %s: %s%s\n", p, first[p], (n[p] > 1 ? " (and " (n[p] - 1) " more)" : "") }' \
    "$work/outside" | sort
fi
if [ -s "$work/unowned" ]; then
  count=$(wc -l <"$work/unowned")
  echo "  in no package (installed by hand?): $(head -n1 "$work/unowned")$([ "$count" -gt 1 ] && echo " (and $((count - 1)) more)")"
fi
echo "check-deps: add each package named above to scripts/deps.sh, or make the build stop looking" \
     "for it (an optional peer is probed in cmake/NccomPeers.cmake); a file in no package must come" \
     "from one that deps.sh installs"
exit 1
