#!/usr/bin/env bash
# Issue 17's catalogue of CUDA runtime programs (tests/cudart_catalogue/README.md) on the GPU
# machine: builds the Release drop-in and fakecuda_capture (build/fuzz-release, as fuzz.sh does),
# captures GPU 0's profile, builds every program with nvcc, runs each on the real driver and on
# the drop-in (with that profile), and compares their outputs line for line.
#   OUT=/tmp/out bash ci/gpu-probes/cudart_catalogue.sh      (on the GPU machine)
# Both sides see one GPU (CUDA_VISIBLE_DEVICES=0; the fake: the captured profile of that GPU).
# Environment: CUHAL_CATALOGUE_JOBS (programs run at a time on the real driver, 4; the fake and
# the builds use every CPU), CUHAL_CATALOGUE_WORK (/tmp/cuhal_catalogue), CUHAL_CATALOGUE_BUILD
# (the build folder, build/fuzz-release).
# Results: $OUT/catalogue.summary.txt (`<name>: same | DIFFER (<n> lines)` per program, then the
# counts and the first lines of each difference) and $OUT/catalogue.tar.gz: catalogue/<name>.real.txt
# and <name>.fake.txt (stdout: the real one is the program's expected output, to be copied to
# tests/cudart_catalogue/expected/<name>.txt), <name>.{real,fake}.err, <name>.diff, the captured
# profile (device0.json) and the machine. On an H100 with 16 cores: build about 2 minutes (less
# when fuzz.sh built the same folder first), programs well under a minute.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
JOBS=${CUHAL_CATALOGUE_JOBS:-4}
WORK=${CUHAL_CATALOGUE_WORK:-/tmp/cuhal_catalogue}
BUILD=${CUHAL_CATALOGUE_BUILD:-build/fuzz-release}
RUNNER=tests/cudart_catalogue/run_catalogue.sh
export CUDA_VISIBLE_DEVICES=0
rm -rf "$WORK"; mkdir -p "$WORK/catalogue" "$WORK/profile"
{
  echo "date: $(date -u '+%F %T UTC')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
} | tee "$WORK/catalogue/machine.txt"

# shellcheck source=dropin_build.sh
. ci/gpu-probes/dropin_build.sh
build_dropin_and_capture "$BUILD" "$WORK" || exit 1
echo "drop-in built and profile captured at $((SECONDS - T0)) s"
cp "$PROFILE" "$WORK/catalogue/device0.json"

$RUNNER --build-only --bin "$WORK/bin" || exit 1  # 77: no nvcc (said); a failed program: its run
echo "programs built at $((SECONDS - T0)) s"
$RUNNER --no-build --bin "$WORK/bin" --jobs "$JOBS" system "$WORK/real"
echo "real driver done at $((SECONDS - T0)) s"
# The real outputs are the expectations here: the lines the fake cannot know (expected/*.ignore:
# the register counts the driver's PTX JIT chose) are left out of the comparison as in CI.
cp tests/cudart_catalogue/expected/*.ignore "$WORK/real/" 2>/dev/null
$RUNNER --no-build --bin "$WORK/bin" --env "FAKECUDA_DEVICES=$PROFILE" --expected "$WORK/real" \
  "$DROPIN" "$WORK/fake" > "$WORK/compare.txt"
echo "drop-in done at $((SECONDS - T0)) s"
cat "$WORK/catalogue/machine.txt" "$WORK/compare.txt" > "$OUT/catalogue.summary.txt"

for real in "$WORK"/real/*.txt; do
  name=$(basename "$real" .txt)
  cp "$real" "$WORK/catalogue/$name.real.txt"
  cp "$WORK/real/$name.err" "$WORK/catalogue/$name.real.err" 2>/dev/null
  cp "$WORK/fake/$name.txt" "$WORK/catalogue/$name.fake.txt" 2>/dev/null
  cp "$WORK/fake/$name.err" "$WORK/catalogue/$name.fake.err" 2>/dev/null
  [ -s "$WORK/fake/$name.diff" ] && cp "$WORK/fake/$name.diff" "$WORK/catalogue/$name.diff"
done
tar czf "$OUT/catalogue.tar.gz" -C "$WORK" catalogue
grep -E "^[A-Za-z0-9_]+: |program\(s\)" "$WORK/compare.txt"
echo "total $((SECONDS - T0)) s"
