#!/usr/bin/env bash
# Runs the libFuzzer targets (docs/fuzzing.md "libFuzzer") for longer than their CTest tests:
#   fuzz/libfuzzer/run.sh [-s SECONDS] [-o OUT_DIR] [-f] [TARGET...]
# Each target (default: all of fuzz/libfuzzer/corpus/*) fuzzes for SECONDS (default 150) from its
# seed corpus and what earlier runs into OUT_DIR found, one process each, two targets at a time.
# A target stops at its first crash; -f runs them with -fork=1 -ignore_crashes=1 instead, going
# on after a crash so that one run finds several (at about twice the CPU per input). Builds the `libfuzzer` preset first. New inputs go to
# OUT_DIR/<target>/corpus (default build/libfuzzer/runs), crashes to OUT_DIR/<target>/artifacts,
# the log to OUT_DIR/<target>/log; the CPU seconds each took are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=150
out=build/libfuzzer/runs
fork=()
while getopts "s:o:f" opt; do
  case $opt in
    s) seconds=$OPTARG ;;
    o) out=$OPTARG ;;
    f) fork=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1) ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in fuzz/libfuzzer/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

cmake --preset libfuzzer >/dev/null
cmake --build --preset libfuzzer -j"$(nproc)"

run_one() {
  local t=$1 dir="$out/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  /usr/bin/time -f "%U %S" -o "$dir/cpu" \
    "build/libfuzzer/fuzz/libfuzzer/${t}_fuzzer" -max_total_time="$seconds" \
    ${fork[@]+"${fork[@]}"} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" "fuzz/libfuzzer/corpus/$t" \
    >"$dir/log" 2>&1 || true
}
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= 2)); then
    wait -n
    running=$((running - 1))
  fi
done
wait
for t in "${targets[@]}"; do
  read -r user sys < <(tail -n 1 "$out/$t/cpu") || true
  crashes=$(find "$out/$t/artifacts" -type f | wc -l)
  printf '%-16s cpu %6.0fs  artifacts %d\n' "$t" "$(echo "${user:-0} + ${sys:-0}" | bc)" "$crashes"
done
