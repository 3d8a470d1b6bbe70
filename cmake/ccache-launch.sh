#!/bin/sh
# Compiler launcher for every preset (CMAKE_<LANG>_COMPILER_LAUNCHER): runs the
# compiler through ccache, set up so that another clone of the same tree, in
# any folder, hits the entries this one stored:
#   base_dir   absolute paths under the clone are rewritten relative to the
#              build directory before they are hashed or passed on;
#   hash_dir   off: the build directory's own path is not part of the key
#              (debug info names paths relative to the clone instead, through
#              the -fdebug-prefix-map the top-level CMakeLists.txt adds).
# Each compilation's outcome is logged in the build directory's
# ccache-stats.log (scripts/test.sh prints the hits of each build from it).
# Without ccache (a machine that skipped scripts/deps.sh) it runs the compiler
# as is. NCCOM_CCACHE=0 turns the cache off for one build.
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${NCCOM_CCACHE:-1}" = 0 ] || ! command -v ccache >/dev/null 2>&1; then
  exec "$@"
fi
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
export CCACHE_STATSLOG="$PWD/ccache-stats.log"  # ninja compiles in the build directory
exec ccache "$@"
