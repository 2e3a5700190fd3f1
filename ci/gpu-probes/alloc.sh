#!/usr/bin/env bash
# One device call for the allocation work (issue 13): builds the real-label allocation tests,
# runs the footprint comparison (twice: are the defaults reproducible?), the pool traces, and the
# replay of every shipped trace on every allocator, then again with PyTorch's allocator
# (-DCUHAL_WITH_TORCH=ON, torch from TORCH_PY's install). Everything lands in $OUT.
#   ci/gpu-probes/alloc.sh            (on the GPU machine; .deb/ carried for the offline deps)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/alloc-out}; mkdir -p "$OUT"
D=/tmp/deps; mkdir -p $D
for deb in .deb/*.deb; do dpkg -x "$deb" $D; done
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
CMAKE_ARGS=(-G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF
  "-DCMAKE_PREFIX_PATH=$D/usr;$D/usr/lib/x86_64-linux-gnu/cmake;$D/usr/share/cmake"
  "-DCMAKE_CXX_FLAGS=-isystem $D/usr/include")
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/machine.txt" 2>&1
T0=$SECONDS
cmake -S . -B build/alloc "${CMAKE_ARGS[@]}" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/alloc -j16 --target pool_footprint_real_test pool_trace_real_test replay_real_test > "$OUT/build.log" 2>&1 || { grep -m5 -A5 error "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS-T0)) s"
export CUHAL_REAL_REQUIRED=1
CUHAL_FOOTPRINT_DUMP=$OUT/dump1.txt timeout 200 build/alloc/tests/trace/pool_footprint_real_test > "$OUT/footprint1.log" 2>&1; echo "footprint1 rc $? at $((SECONDS-T0)) s"
grep "^FOOTPRINT" "$OUT/footprint1.log"
timeout 120 build/alloc/tests/pools/pool_trace_real_test > "$OUT/pool_traces.log" 2>&1; echo "pool_trace_real rc $?"
grep -E "^\s+\(|FAILED|PASSED" "$OUT/pool_traces.log" | head -30
timeout 150 build/alloc/tests/trace/replay_real_test > "$OUT/replay.log" 2>&1; echo "replay_real rc $? at $((SECONDS-T0)) s"
grep -E "^REPLAY|Failure|FAILED" "$OUT/replay.log" | head -40
if [ "${CUHAL_ALLOC_TWICE:-0}" = 1 ]; then  # are the defaults reproducible?
  timeout 120 build/alloc/tests/trace/pool_footprint_real_test --gtest_filter='*defaults*' > "$OUT/footprint2.log" 2>&1; echo "footprint2 rc $? at $((SECONDS-T0)) s"
  grep "^FOOTPRINT" "$OUT/footprint2.log"
fi
gzip -f "$OUT"/dump1.txt
if [ -x "$TORCH_PY" ] && [ $((SECONDS-T0)) -lt 380 ]; then
  cmake -S . -B build/alloc-torch "${CMAKE_ARGS[@]}" -DCUHAL_WITH_TORCH=ON \
    -DPython3_EXECUTABLE="$TORCH_PY" > "$OUT/configure-torch.log" 2>&1 || tail -20 "$OUT/configure-torch.log"
  cmake --build build/alloc-torch -j16 --target replay_real_test alloc_bench > "$OUT/build-torch.log" 2>&1 || grep -m8 -B2 -A8 "error" "$OUT/build-torch.log"
  echo "torch build at $((SECONDS-T0)) s"
  timeout 150 build/alloc-torch/tests/trace/replay_real_test > "$OUT/replay-torch.log" 2>&1; echo "replay_real(torch) rc $?"
  grep -E "^REPLAY|Failure|FAILED|error" "$OUT/replay-torch.log" | head -40
  timeout 120 build/alloc-torch/bench/alloc_bench --backend=real --benchmark_min_time=0.2s \
    --benchmark_out="$OUT/alloc_bench.json" --benchmark_out_format=json > "$OUT/alloc_bench.txt" 2>&1
  echo "alloc_bench rc $?"; grep -E "BM_|not bench" "$OUT/alloc_bench.txt" | cut -c1-220
fi
echo "total $((SECONDS-T0)) s"
