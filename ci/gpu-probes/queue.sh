#!/usr/bin/env bash
# One device call for the queue submission cost (issue 20): builds bench/queue_bench (Release, no
# tests) and runs the ready-submission benchmarks next to their driver floors on the real driver,
# interleaved and repeated, so that "submission - floor" (the core's own host cost) is read from
# one run of one machine. Everything lands in $OUT; the medians are printed.
#   ci/gpu-probes/queue.sh            (on the GPU machine)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/queue-out}; mkdir -p "$OUT"
REPS=${CUHAL_QUEUE_REPS:-7}
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/machine.txt" 2>&1
lscpu | grep -E "Model name|^CPU\(s\)|MHz" >> "$OUT/machine.txt" 2>&1
T0=$SECONDS
cmake -S . -B build/queue -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF \
  -DCUHAL_BUILD_TESTS=OFF -DCUHAL_BUILD_CLI=OFF > "$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/queue -j16 --target queue_bench > "$OUT/build.log" 2>&1 \
  || { grep -m5 -A5 error "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS-T0)) s"
timeout 300 build/queue/bench/queue_bench \
  --benchmark_filter='(SubmitReady|Floor|DriverEventRecord|DriverLaunchHostFunc|QueueToQueue).*/real' \
  --benchmark_min_time=0.1s --benchmark_repetitions="$REPS" \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_out="$OUT/queue_bench.json" --benchmark_out_format=json > "$OUT/queue_bench.txt" 2>&1
echo "queue_bench rc $? at $((SECONDS-T0)) s"
grep -E "_median|error|Error" "$OUT/queue_bench.txt" | awk '{printf "%-60s %10s %s  cpu %10s %s\n", $1, $2, $3, $4, $5}'
grep -E "_median" "$OUT/queue_bench.txt" | grep -oE "^BM_[^ ]+|calls=[0-9.]+|cuCtx[A-Za-z]*=[0-9.]+|vcsw=[0-9.]+|sys_ns=[0-9.]+" | paste -sd' ' | sed 's/ BM_/\nBM_/g'
# Diagnostic (CUHAL_QUEUE_JEMALLOC=1, with Debian's libjemalloc2 .deb carried in .deb/): the same
# submissions with jemalloc preloaded. A submission whose cost falls with another malloc spends it
# in glibc's allocator (its arena lock, contended by the submitting thread and the worker).
if [ "${CUHAL_QUEUE_JEMALLOC:-0}" = 1 ]; then
  J=/tmp/jemalloc; mkdir -p $J
  for deb in .deb/libjemalloc2*.deb; do dpkg -x "$deb" $J; done
  JE=$(find $J -name 'libjemalloc.so.2' | head -1)
  if [ -n "$JE" ]; then
    LD_PRELOAD=$JE timeout 200 build/queue/bench/queue_bench \
      --benchmark_filter='(SubmitReady).*worker:1/poll_us:0/on_worker:0/real' \
      --benchmark_min_time=0.1s --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true > "$OUT/queue_bench_jemalloc.txt" 2>&1
    echo "queue_bench (jemalloc) rc $? at $((SECONDS-T0)) s"
    grep -E "_median" "$OUT/queue_bench_jemalloc.txt" | awk '{printf "jemalloc %-52s %10s %s  cpu %10s %s\n", $1, $2, $3, $4, $5}'
  else
    echo "jemalloc: no libjemalloc2 .deb in .deb/"
  fi
fi
echo "total $((SECONDS-T0)) s"
