#!/usr/bin/env bash
# Build the `fuzz` preset and run every libFuzzer target for SECONDS each.
#
#   tests/fuzz/run-fuzzers.sh [SECONDS] [TARGET...]      (default: 60, all targets)
#
# Each fuzzer starts from a copy of its committed corpus (tests/fuzz/corpus/<t>)
# and writes what it finds to build/fuzz/corpus-out/<t>/ -- the committed
# corpus is never touched. Crash/leak/timeout/oom inputs go to
# build/fuzz/artifacts/<t>/; logs to build/fuzz/logs/<t>.log.
# At the end, one line per target: seconds, executions (libFuzzer's
# stat::number_of_executed_units), corpus files after the run, and the
# crash/leak/timeout/oom inputs this run wrote.
# Environment: FUZZ_JOBS (parallel fuzzers, default 1), FUZZ_ARGS (extra libFuzzer
# flags, e.g. "-fork=1 -ignore_crashes=1 -ignore_timeouts=1" to go on past a known
# crash, such as an unfixed crash-* regression input copied in with the corpus).
# Exit status: 1 when any fuzzer crashed.
set -euo pipefail

SECONDS_PER_TARGET=${1:-60}
shift || true
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD="$ROOT/build/fuzz"
ALL_TARGETS=(frame_decoder event_decoder master_config spool_recovery bulk_result event_from_json server_info job_cache_file reconcile_state search_response)
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

cd "$ROOT"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${TARGETS[@]/%/-fuzz}"

# Inputs larger than the biggest seed rarely help; frames need room for a few.
max_len() {
  case "$1" in
    frame_decoder) echo 65536 ;;
    event_decoder) echo 16384 ;;
    spool_recovery) echo 8192 ;;  # a ledger and a few records per segment
    bulk_result) echo 16384 ;;    # a few hundred items; real answers are ~200 bytes an item
    event_from_json) echo 16384 ;;  # the capture lines used as seeds (all but large_return)
    job_cache_file) echo 16384 ;; # the captured caches' files but the large returns
    *) echo 4096 ;;
  esac
}

run_one() {
  local t=$1
  local bin="$BUILD/tests/fuzz/$t-fuzz"
  [[ -x "$bin" ]] || bin=$(find "$BUILD" -name "$t-fuzz" -type f -perm -u+x | head -n1)
  [[ -x "$bin" ]] || { echo "$t: no $t-fuzz binary (is tests/fuzz added to the build?)" >&2; return 2; }
  local out="$BUILD/corpus-out/$t" art="$BUILD/artifacts/$t" log="$BUILD/logs/$t.log"
  mkdir -p "$out" "$art" "$(dirname "$log")"
  local started="$BUILD/logs/$t.started"
  touch "$started"
  cp -n "$ROOT/tests/fuzz/corpus/$t/"* "$out/" 2>/dev/null || true
  local status=0
  # shellcheck disable=SC2086
  "$bin" "$out" -max_total_time="$SECONDS_PER_TARGET" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_ARGS:-} >"$log" 2>&1 || status=$?
  local execs rate
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n1 || true)
  rate=$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n1 || true)
  if [[ -z $execs ]]; then  # -fork=N prints "#<execs>: cov: ... time: <s>s" lines instead
    local last
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n1 || true)
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    local secs
    secs=$(grep -Eo 'time: [0-9]+s' <<<"$last" | grep -Eo '[0-9]+' || true)
    [[ -n $execs && -n $secs && $secs -gt 0 ]] && rate=$((execs / secs))
  fi
  local cov
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1 || true)
  local corpus crashes
  corpus=$(find "$out" -maxdepth 1 -type f | wc -l)
  crashes=$(find "$art" -maxdepth 1 -type f -newer "$started" | wc -l)
  printf '%-14s %6ss  %10s execs  %7s exec/s  %s  corpus %s files\n' "$t" "$SECONDS_PER_TARGET" \
    "${execs:-?}" "${rate:-?}" "${cov:-}" "$corpus"
  printf '%-14s %7s %12s %8s %8s %7s\n' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${rate:-?}" "$corpus" \
    "$crashes" >"$BUILD/logs/$t.summary"
  if [[ $status -ne 0 ]]; then
    echo "$t: FUZZER FAILED (exit $status), see $log" >&2
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*invariant broken|artifact_prefix|Test unit written)' "$log" | head -n 20 >&2 || true
    ls -1 "$art"/* 2>/dev/null | sed 's/^/  crash file: /' >&2 || true
    return 1
  fi
}

failed=0
max_jobs=${FUZZ_JOBS:-1}
for t in "${TARGETS[@]}"; do rm -f "$BUILD/logs/$t.summary"; done
if [[ $max_jobs -le 1 ]]; then
  for t in "${TARGETS[@]}"; do run_one "$t" || failed=1; done
else
  pids=()
  for t in "${TARGETS[@]}"; do
    run_one "$t" & pids+=($!)
    while [[ $(jobs -rp | wc -l) -ge $max_jobs ]]; do sleep 1; done
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
fi

echo
printf '%-14s %7s %12s %8s %8s %7s\n' target seconds executions exec/s corpus crashes
for t in "${TARGETS[@]}"; do
  if [[ -f "$BUILD/logs/$t.summary" ]]; then cat "$BUILD/logs/$t.summary"
  else printf '%-14s %7s %12s %8s %8s %7s\n' "$t" "$SECONDS_PER_TARGET" '-' '-' '-' 'no run'; fi
done
exit $failed
