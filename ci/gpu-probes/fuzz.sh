#!/usr/bin/env bash
# Issue 14's differential fuzzer on the GPU machine: builds cuhal_fuzz (Release, nothing else),
# runs N seeds (default 10000) on the fake and on the real driver, each backend in its own
# processes (xargs -P, a chunk of seeds per cuhal_fuzz; inside it every batch of seeds is a child
# process, so a crash or a hang is a per-seed finding), compares the transcripts and minimizes
# the first mismatching seed into a ready-to-paste GoogleTest case. Needs no test dependencies.
#   OUT=/tmp/out bash ci/gpu-probes/fuzz.sh [N]      (on the GPU machine)
# Environment: CUHAL_FUZZ_JOBS (16), CUHAL_FUZZ_CHUNK (seeds per cuhal_fuzz, 100),
# CUHAL_FUZZ_GPUS (GPUs the real driver's runs are spread over, round robin by chunk, each chunk's
# process seeing one GPU through CUDA_VISIBLE_DEVICES: all of nvidia-smi's; JOBS processes per GPU;
# the fake runs JOBS processes), CUHAL_FUZZ_FIRST (first seed, 1), CUHAL_FUZZ_BUDGET_S (seconds for the fake's run, 120; the
# real driver gets CUHAL_FUZZ_REAL_BUDGET_S, by default 2x: no batch starts after it, and the report
# says how many sequences ran), CUHAL_FUZZ_SEED_TIMEOUT (seconds without progress before a seed is
# a HANG, 10), CUHAL_FUZZ_MINIMIZE (0: do not minimize), CUHAL_FUZZ_TIMING (set: each child adds up
# the time of each call name; the totals go to $OUT/timing.{fake,real}.txt), CUHAL_FUZZ_FAKE (0: run
# only the real driver, and no comparison: for a short GPU lease, the fake side is run afterwards on
# the development machine by fuzz/corpus/add_run.sh, which compares every seed). Every transcript comes back in $OUT/transcripts.tar.gz.
# Worst case about 7 minutes: build, 120 + 240 s of runs, 60 s of minimization.
# Results: $OUT/summary.txt, $OUT/compare.txt, $OUT/minimized.txt, the transcripts of the first
# mismatching seeds in $OUT/mismatches/<seed>.{fake,real}.txt; every transcript stays in $WORK.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
N=${1:-10000}
JOBS=${CUHAL_FUZZ_JOBS:-16}
CHUNK=${CUHAL_FUZZ_CHUNK:-100}
FIRST=${CUHAL_FUZZ_FIRST:-1}
BUDGET=${CUHAL_FUZZ_BUDGET_S:-120}
REAL_BUDGET=${CUHAL_FUZZ_REAL_BUDGET_S:-$((2 * BUDGET))}
SEED_TIMEOUT=${CUHAL_FUZZ_SEED_TIMEOUT:-10}
WORK=${CUHAL_FUZZ_WORK:-/tmp/cuhal_fuzz_run}
GPUS=${CUHAL_FUZZ_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$GPUS" -ge 1 ] 2>/dev/null || GPUS=1
BUILD=build/fuzz-release
rm -rf "$WORK"; mkdir -p "$WORK/fake" "$WORK/real" "$OUT/mismatches"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/machine.txt"
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF -DCUHAL_BUILD_TESTS=OFF \
  -DCUHAL_BUILD_BENCHMARKS=OFF -DCUHAL_BUILD_CLI=OFF > "$OUT/configure.log" 2>&1 \
  || { tail -20 "$OUT/configure.log"; exit 1; }
timeout 400 cmake --build $BUILD -j"$(nproc)" --target cuhal_fuzz cuhal_fakecuda_dropin > "$OUT/build.log" 2>&1
rc=$?; echo "build rc $rc at $((SECONDS-T0)) s"
[ $rc -eq 0 ] || { grep -m5 -B2 -A5 "error" "$OUT/build.log"; exit 1; }
FUZZ=$BUILD/fuzz/cuhal_fuzz
$FUZZ --list-excluded > "$OUT/excluded.txt"

LAST=$((FIRST + N - 1))
chunks() { for ((s = FIRST; s <= LAST; s += CHUNK)); do
  e=$((s + CHUNK - 1)); [ $e -gt $LAST ] && e=$LAST; echo "$s..$e"; done; }
run_backend() {  # backend batch budget_s gpus [flags of cuhal_fuzz]
  local t=$SECONDS BUDGET=$3 G=$4
  local deadline=$(( $(date +%s) + BUDGET ))  # no new batch after it; running ones finish
  # Each line "gpu first..last" becomes one cuhal_fuzz that sees only that GPU (xargs appends
  # the line's two words after the fixed arguments).
  chunks | awk -v g="$G" '{ print (NR - 1) % g, $0 }' \
    | timeout $((BUDGET + 60)) xargs -P $((JOBS * G)) -L1 bash -c \
        'n=$#; CUDA_VISIBLE_DEVICES=${@:n-1:1} exec "$0" --seeds "${@:n:1}" "${@:1:n-2}"' "$FUZZ" \
    --backend "$1" --batch "$2" --timeout "$SEED_TIMEOUT" --show 0 --deadline "$deadline" \
    --transcript-dir "$WORK/$1" "${@:5}" > "$WORK/$1.log" 2> "$WORK/$1.err"
  echo "$1: rc $? in $((SECONDS - t)) s on $G GPU(s)"
}
FAKE=${CUHAL_FUZZ_FAKE:-1}
[ "$FAKE" = 0 ] || run_backend fake 100 "$BUDGET" 1
run_backend real "${CUHAL_FUZZ_REAL_BATCH:-25}" "$REAL_BUDGET" "$GPUS"
tar czf "$OUT/transcripts.tar.gz" -C "$WORK" fake real
# With CUHAL_FUZZ_TIMING=1 every child wrote "timing <call> <calls> <ms>": where the time went.
BACKENDS="fake real"; [ "$FAKE" = 0 ] && BACKENDS=real
for b in $BACKENDS; do
  awk '/^timing / { c[$2] += $3; t[$2] += $4; all += $4 }
       END { for (k in t) printf "%-34s %8d calls %10.0f ms %5.1f%% %9.3f ms/call\n", k, c[k],
                                 t[k], 100 * t[k] / (all ? all : 1), t[k] / c[k] }' \
    "$WORK/$b.err" | sort -k4 -nr | head -40 > "$OUT/timing.$b.txt"
done
[ -s "$OUT/timing.real.txt" ] && { echo "real driver, where the time went:"; head -15 "$OUT/timing.real.txt"; }
{
  echo "sequences run: fake $(ls "$WORK/fake" | wc -l), real $(ls "$WORK/real" | wc -l) of $N"
  for b in $BACKENDS; do
    awk -v b=$b '/^backend/ { gsub(",", ""); n += $4; c += $6; h += $8; l += $10; u += $16;
                              r += $18 }
      END { printf "%s: sequences %d, crashes %d, hangs %d, not run %d; fake only: leaks %d, " \
                   "stream-order races %d\n", b, n, c, h, u, l, r }' "$WORK/$b.log"
  done
} | tee "$OUT/summary.txt"
for b in $BACKENDS; do grep -m10 "cuhal_fuzz: seed" "$WORK/$b.err"; done | tee -a "$OUT/summary.txt"
[ "$FAKE" = 0 ] && { echo "fake side not run (CUHAL_FUZZ_FAKE=0): compare with fuzz/corpus/add_run.sh"
                     echo "total $((SECONDS-T0)) s"; exit 0; }
$FUZZ --compare "$WORK/fake" "$WORK/real" --show 10 > "$OUT/compare.txt" 2>&1
tail -2 "$OUT/compare.txt" | tee -a "$OUT/summary.txt"
echo "first mismatches:"; grep -A2 "first mismatch" "$OUT/compare.txt" | head -30
for s in $(grep -oE "^seed [0-9]+: first mismatch" "$OUT/compare.txt" | awk '{print $2}' | tr -d : | head -10); do
  cp "$WORK/fake/$s.txt" "$OUT/mismatches/$s.fake.txt"; cp "$WORK/real/$s.txt" "$OUT/mismatches/$s.real.txt"
done
FIRST_BAD=$(grep -oE "^seed [0-9]+: first mismatch" "$OUT/compare.txt" | head -1 | awk '{print $2}' | tr -d :)
if [ -n "$FIRST_BAD" ] && [ "${CUHAL_FUZZ_MINIMIZE:-1}" = 1 ]; then
  timeout 120 $FUZZ --minimize "$FIRST_BAD" --timeout 10 --minimize-budget 60 \
    > "$OUT/minimized.txt" 2>&1
  echo "minimize seed $FIRST_BAD: rc $?"; sed -n '1,8p' "$OUT/minimized.txt"
fi
echo "total $((SECONDS-T0)) s"
