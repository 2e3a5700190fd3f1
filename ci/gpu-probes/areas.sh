#!/usr/bin/env bash
# Issue 14's per-area probes on the GPU machine: compiles each named ci/gpu-probes/<area>_probe.cc
# with g++ (plain driver API, -lcuda) and runs `<probe> all 8` against the real driver, writing
# $OUT/<area>.real.txt. With a drop-in directory as $2 it also runs each probe against the fake
# (LD_LIBRARY_PATH) into $OUT/<area>.fake.txt and writes $OUT/<area>.diff.txt.
#   OUT=/tmp/out bash ci/gpu-probes/areas.sh "array library misc graphnode" [dropin-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
AREAS=${1:-"array library misc graphnode"}
DROPIN=${2:-}
for a in $AREAS; do
  src=ci/gpu-probes/${a}_probe.cc
  [ -f "$src" ] || { echo "$a: no $src"; continue; }
  if ! g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include "$src" -o "/tmp/cuhal_${a}_probe" \
       -lcuda -ldl -lpthread > "$OUT/$a.build.txt" 2>&1; then
    echo "$a: build failed"; tail -5 "$OUT/$a.build.txt"; continue
  fi
  t=$SECONDS
  timeout 240 "/tmp/cuhal_${a}_probe" all 8 > "$OUT/$a.real.txt" 2>&1
  echo "$a real: rc $? in $((SECONDS - t)) s, $(grep -c '^== ' "$OUT/$a.real.txt") cases," \
       "$(grep '^== ' "$OUT/$a.real.txt" | grep -vc 'exit 0$') not exit 0"
  if [ -n "$DROPIN" ]; then
    t=$SECONDS
    LD_LIBRARY_PATH="$DROPIN" timeout 240 "/tmp/cuhal_${a}_probe" all 8 > "$OUT/$a.fake.txt" 2>&1
    echo "$a fake: rc $? in $((SECONDS - t)) s"
    diff <(sort "$OUT/$a.real.txt") <(sort "$OUT/$a.fake.txt") > "$OUT/$a.diff.txt"
    echo "$a: $(grep -c '^<' "$OUT/$a.diff.txt") real-only lines, $(grep -c '^>' "$OUT/$a.diff.txt") fake-only lines"
  fi
done
