# Sourced by scripts/test.sh and .ci/run: run_step NAME COMMAND... runs one
# step, prints its wall time, and adds it to the run's summary, which
# print_steps prints (also when a step fails). A step that fails ends the run
# with its exit status. With NCCOM_STEP_LOG set, every step's line is also
# appended to that file (.ci/run sums up the steps of several scripts so).
_steps_summary=()

_add_step() {
  _steps_summary+=("$1")
  if [ -n "${NCCOM_STEP_LOG:-}" ]; then printf '%s\n' "$1" >>"$NCCOM_STEP_LOG"; fi
}

run_step() {
  local name=$1
  shift
  local start rc=0
  start=$(date +%s)
  echo "== $name"
  "$@" || rc=$?
  local took=$(($(date +%s) - start))
  if [ "$rc" -ne 0 ]; then
    _add_step "$(printf '%5d s  %s  FAILED (exit %d)' "$took" "$name" "$rc")"
    echo "== $name: failed (exit $rc) after $took s"
    print_steps
    exit "$rc"
  fi
  _add_step "$(printf '%5d s  %s' "$took" "$name")"
  echo "== $name: $took s"
}

print_steps() {
  [ ${#_steps_summary[@]} -gt 0 ] || return 0
  echo "== wall time per step:"
  printf '   %s\n' "${_steps_summary[@]}"
  _steps_summary=()
}
