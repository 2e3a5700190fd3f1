#!/usr/bin/env bash
# One device call for issue 20's ready-submission target with DeviceParams::issue_on_worker: builds
# queue_bench and the queue/device conformance suites (Release), runs the conformance suites on the
# real driver (both instantiations: the submitting thread issues / the worker issues), then the
# ready-submission benchmarks in every mode next to their driver floors, interleaved and repeated.
# CPU is the submitting thread's time per operation; all_cpu_ns the whole process's per operation
# (every thread, drains included: an upper bound). Carry .deb/ (trompeloeil for the test build).
#   OUT=/tmp/out bash ci/gpu-probes/queue_on_worker.sh      (on the GPU machine)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
REPS=${CUHAL_QUEUE_REPS:-5}
DEPS=/tmp/cuhal-deps; mkdir -p $DEPS; for deb in .deb/*.deb; do dpkg -x "$deb" $DEPS; done
BUILD=build/h200
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/machine.txt"
lscpu | grep -E "Model name|^CPU\(s\)" | tee -a "$OUT/machine.txt"
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF \
  "-DCMAKE_PREFIX_PATH=$DEPS/usr;$DEPS/usr/lib/x86_64-linux-gnu/cmake;$DEPS/usr/share/cmake" \
  "-DCMAKE_CXX_FLAGS=-isystem $DEPS/usr/include" > "$OUT/configure.log" 2>&1 \
  || { tail -20 "$OUT/configure.log"; exit 1; }
timeout 240 cmake --build $BUILD -j16 --target queue_bench queue_conformance_real_test \
  device_conformance_real_test > "$OUT/build.log" 2>&1
echo "build rc $? at $((SECONDS-T0)) s"; grep -m5 -B2 -A5 "error" "$OUT/build.log"
export CUHAL_REAL_REQUIRED=1
for t in semaphore/queue device/device; do
  timeout 120 $BUILD/tests/${t}_conformance_real_test > "$OUT/$(basename $t).log" 2>&1
  echo "$t conformance real rc $?"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' "$OUT/$(basename $t).log" | head -20
done
timeout 280 $BUILD/bench/queue_bench \
  --benchmark_filter='^BM_(SubmitReady[A-Za-z]+/real/|Driver[A-Za-z]*Floor/real|DriverEventRecord/real)' \
  --benchmark_min_time=0.1s --benchmark_repetitions="$REPS" \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_out="$OUT/queue_bench.json" --benchmark_out_format=json > "$OUT/queue_bench.txt" 2>&1
echo "queue_bench rc $? at $((SECONDS-T0)) s"
grep -E "_median" "$OUT/queue_bench.txt" | grep -oE "^BM_[^ ]+ +[0-9.]+ [mun]s +[0-9.]+ [mun]s|all_cpu_ns=[0-9.kM]+|calls=[0-9.]+|vcsw=[0-9.]+|sys_ns=[0-9.kM]+" \
  | paste -sd' ' | sed 's/ BM_/\nBM_/g'
echo "total $((SECONDS-T0)) s"
