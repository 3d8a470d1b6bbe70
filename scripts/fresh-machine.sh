#!/usr/bin/env bash
# Runs the README's two commands on a new Debian 12 machine: a minimal
# bookworm root (mmdebstrap --variant=minbase, from this machine's own apt
# sources), a clean clone of HEAD inside it, proc/sys/dev/dev/shm/dev/pts
# mounted, and each command run as root with an empty environment. Prints the
# time of each step and the tests' pass count; exits non-zero if either
# command fails. What the tree needs and deps.sh does not install fails here.
#
#   bash scripts/fresh-machine.sh                 both commands
#   bash scripts/fresh-machine.sh --quickstart    command 1 only
#   bash scripts/fresh-machine.sh --ci            command 1, then .ci/run (command 2 and what
#                                                 only CI runs) with every cache empty: the
#                                                 cold CI figure, step by step
#   bash scripts/fresh-machine.sh --style         command 2's first steps only: deps.sh, then
#                                                 style.sh --check (a few minutes)
#   bash scripts/fresh-machine.sh --keep          leave the root (and print where)
#   bash scripts/fresh-machine.sh --new-root      build the minimal root anew
#
# Needs root. The minimal root is cached as a tarball under
# /var/cache/nccom-fresh-machine and reused (--new-root or deleting it makes
# a new one); each run unpacks it into a new folder under /var/tmp and removes
# that folder at the end. The mounts live in a mount namespace of the run's
# own, so they end with it even if the run is killed. Logs of the two
# commands stay in /var/tmp/nccom-fresh-machine-logs.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

keep=0
new_root=0
commands=(quickstart test)
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --new-root) new_root=1 ;;
    --quickstart) commands=(quickstart) ;;
    --ci) commands=(quickstart ci) ;;
    --style) commands=(style) ;;
    -h|--help) sed -n '2,24s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "fresh-machine: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine: needs root (it builds a root file system and mounts into it)" >&2
  exit 2
fi
if ! git -C "$repo" rev-parse --verify -q HEAD >/dev/null; then
  echo "fresh-machine: $repo is not a git checkout with a commit: it clones HEAD" >&2
  exit 2
fi
if [ -n "$(git -C "$repo" status --porcelain)" ]; then
  echo "fresh-machine: note: uncommitted changes are not part of the run (it clones HEAD)" >&2
fi

for tool in mmdebstrap unshare chroot; do
  if ! command -v "$tool" >/dev/null; then
    echo "fresh-machine: installing mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap util-linux
    break
  fi
done

cache_dir=/var/cache/nccom-fresh-machine
cache=$cache_dir/bookworm-minbase.tar
log_dir=/var/tmp/nccom-fresh-machine-logs
mkdir -p "$cache_dir" "$log_dir"

now() { date +%s; }
declare -A took

# 1. The minimal root, from this machine's apt sources and fetch settings.
start=$(now)
if [ "$new_root" -eq 1 ] || [ ! -s "$cache" ]; then
  sources=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && sources+=("$f")
  done
  if [ ${#sources[@]} -eq 0 ]; then
    echo "fresh-machine: this machine has no apt sources (/etc/apt/sources.list{,.d})" >&2
    exit 2
  fi
  aptopts=()
  for f in /etc/apt/apt.conf.d/*; do  # how this machine reaches its mirrors
    [ -f "$f" ] && grep -q 'Acquire::' "$f" && aptopts+=(--aptopt="$f")
  done
  echo "fresh-machine: building a minimal bookworm root (cached in $cache)"
  rm -f "$cache.new"
  if ! mmdebstrap --quiet --mode=root --format=tar --variant=minbase "${aptopts[@]}" bookworm "$cache.new" \
       "${sources[@]}" >"$log_dir/mmdebstrap.log" 2>&1; then
    echo "fresh-machine: mmdebstrap failed; its log ($log_dir/mmdebstrap.log) ends:" >&2
    tail -n 20 "$log_dir/mmdebstrap.log" >&2
    rm -f "$cache.new"
    exit 1
  fi
  mv "$cache.new" "$cache"
  took[root]="$(($(now) - start)) s (built)"
else
  took[root]="$(($(now) - start)) s (cached $(date -r "$cache" +%F))"
fi

# 2. A new folder with the root and a clean clone of HEAD.
work=$(mktemp -d /var/tmp/nccom-fresh-machine.XXXXXX)
root=$work/root
child=""
cleanup() {
  if [ -n "$child" ]; then  # interrupted: end the command's whole session first
    kill -TERM -- "-$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [ "$keep" -eq 1 ]; then
    echo "fresh-machine: the root is kept in $root"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$root"
start=$(now)
tar -C "$root" -xf "$cache"
cp /etc/resolv.conf "$root/etc/resolv.conf"
[ -f /etc/hosts ] && cp /etc/hosts "$root/etc/hosts"
git clone -q --no-hardlinks "$repo" "$root/root/nccom"
head=$(git -C "$root/root/nccom" log -1 --format='%h %s' | cut -c1-72)
took[unpack]="$(($(now) - start)) s"
echo "fresh-machine: HEAD $head"

# 3. Each command, as root, with an empty environment, in a mount namespace
#    holding the root's proc, sys, dev, dev/shm and dev/pts.
run_in_root() {  # name, command line
  local name=$1 cmd=$2 rc=0
  setsid unshare --mount --propagation private -- bash -euc '
    root=$1; cmd=$2
    # The root is a mount point of its own, as / is on a real machine:
    # "ip -n NS ..." remounts / (mount --make-rslave /), which fails on a
    # plain directory, and the network-namespace tests need it.
    mount --bind "$root" "$root"
    mount -t proc proc "$root/proc"
    # /sys as the machine has it, cgroup file systems included (slurmd needs them).
    mount --rbind /sys "$root/sys"
    mount --bind /dev "$root/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
    mount --bind /dev/pts "$root/dev/pts"
    exec env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      chroot "$root" /bin/bash -c "cd /root/nccom && $cmd" </dev/null
  ' fresh-machine "$root" "$cmd" >"$log_dir/$name.log" 2>&1 &
  child=$!
  wait "$child" || rc=$?
  child=""
  return "$rc"
}

status=0
for c in "${commands[@]}"; do
  case "$c" in
    quickstart) line="bash scripts/quickstart.sh" ;;
    test) line="bash scripts/test.sh" ;;
    ci) line="bash .ci/run" ;;
    style) line="bash scripts/deps.sh && bash scripts/style.sh --check" ;;
  esac
  echo "fresh-machine: running '$line' (log: $log_dir/$c.log)"
  start=$(now)
  if run_in_root "$c" "$line"; then
    took[$c]="$(($(now) - start)) s, passed"
  else
    rc=$?
    took[$c]="$(($(now) - start)) s, FAILED (exit $rc)"
    status=1
    echo "fresh-machine: '$line' failed (exit $rc); its log ends:" >&2
    tail -n 30 "$log_dir/$c.log" >&2
  fi
done

echo
echo "fresh-machine: summary (HEAD $head)"
echo "  minimal root:          ${took[root]}"
echo "  unpack + clone:        ${took[unpack]}"
for c in "${commands[@]}"; do
  case "$c" in
    ci) printf '  %-22s %s\n' "bash .ci/run:" "${took[$c]}" ;;
    *) printf '  %-22s %s\n' "bash scripts/$c.sh:" "${took[$c]}" ;;
  esac
done
if [ -f "$log_dir/quickstart.log" ] && [[ " ${commands[*]} " == *" quickstart "* ]]; then
  grep -E '^# (Avg bus bandwidth|Wrong elements)' "$log_dir/quickstart.log" | tail -n 2 | sed 's/^# */  main job: /' || true
fi
if [[ " ${commands[*]} " == *" test "* ]]; then
  grep -E 'tests passed, [0-9]+ tests failed out of' "$log_dir/test.log" | tail -n 1 | sed 's/^/  tests: /' || true
fi
if [[ " ${commands[*]} " == *" ci "* ]]; then
  grep -E 'tests passed, [0-9]+ tests failed out of' "$log_dir/ci.log" | sed 's/^/  tests: /' || true
  # .ci/run's own list of steps, between its heading and its total
  sed -n '/^== CI, wall time per step:/,/^== CI: /p' "$log_dir/ci.log" | sed 's/^/  /' || true
fi
exit "$status"
