#!/usr/bin/env bash
# One device call: the PTX catalogue fake vs GPU, the real catalogue, the numerics probe (compared
# with the sm_90 results of 2026-12-05), the queue and device conformance suites on the real driver
# and the ready-submission benchmarks (default and polling completion modes). Carry .deb/.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
DEPS=/tmp/cuhal-deps; mkdir -p $DEPS; for deb in .deb/*.deb; do dpkg -x "$deb" $DEPS; done
BUILD=build/h200
nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF \
  "-DCMAKE_PREFIX_PATH=$DEPS/usr;$DEPS/usr/lib/x86_64-linux-gnu/cmake;$DEPS/usr/share/cmake" \
  "-DCMAKE_CXX_FLAGS=-isystem $DEPS/usr/include" > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
timeout 170 cmake --build $BUILD -j16 --target ptx_catalogue_compare_test ptx_catalogue_real_test ptx_interpreter_test queue_bench queue_conformance_real_test device_conformance_real_test > "$OUT/build.log" 2>&1; echo "build rc $? at $((SECONDS-T0)) s"
export CUHAL_REAL_REQUIRED=1
timeout 90 $BUILD/tests/ptx/ptx_catalogue_compare_test > "$OUT/ptx.log" 2>&1; echo "ptx compare rc $?"; grep -E '^ptx catalogue|FAILED' "$OUT/ptx.log"
timeout 60 $BUILD/tests/ptx/ptx_catalogue_real_test > "$OUT/ptxreal.log" 2>&1; echo "ptx real rc $?"; grep -E '^\[  PASSED|^\[  FAILED' "$OUT/ptxreal.log"
for t in semaphore/queue device/device; do timeout 60 $BUILD/tests/${t}_conformance_real_test > "$OUT/$(basename $t).log" 2>&1; echo "$t conformance real rc $?"; grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$(basename $t).log"; done
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$NVCC -arch=sm_90 -o /tmp/p ci/gpu-probes/ptx_numerics_probe.cu > /dev/null 2>&1 && timeout 20 /tmp/p > "$OUT/probe.txt" 2>&1; echo "probe rc $?"; diff <(grep -E "^(nan|mma)" "$OUT/probe.txt") <(grep -E "^(nan|mma)" ci/gpu-probes/results/2026-12-05-probe-ptx-numerics.txt) && echo "probe: same bits as the H100's"
timeout 100 $BUILD/bench/queue_bench --benchmark_filter='^BM_(SubmitReady[A-Za-z]+/real/worker:1|Driver[A-Za-z]*Floor/real|DriverEventRecord/real|QueueToQueueWait/real)' \
  --benchmark_min_time=0.1s --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true > "$OUT/q.txt" 2>&1; echo "queue_bench rc $?"
grep -E "_median" "$OUT/q.txt" | cut -c1-300
echo "total $((SECONDS-T0)) s"
