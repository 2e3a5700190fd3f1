#!/bin/sh
# Runs probe_program (argument 1) until it completes, skipping each probe that crashes the driver
# (the last line of a crashed run names it) and reporting it as "CRASH". Prints the final output.
# Used on the GPU machine to capture probe_expected.txt: the real driver crashes on some invalid
# calls (NULL output pointers), which the fake must survive.
program="$1"
skip=""
for attempt in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
  out=$(PROBE_SKIP="$skip" "$program" 2>/dev/null)
  status=$?
  if [ "$status" -eq 0 ]; then
    printf '%s\n' "$out"
    exit 0
  fi
  culprit=$(printf '%s\n' "$out" | tail -n 1 | sed 's/: .*//')
  skip="${skip:+$skip,}$culprit"
  echo "run_probes: exit status $status at probe '$culprit'; skipping it" >&2
done
echo "run_probes: too many crashes" >&2
exit 1
