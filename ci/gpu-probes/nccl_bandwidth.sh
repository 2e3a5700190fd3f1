#!/usr/bin/env bash
# One device call: issue 18's collective bandwidth table, measured in one run of bench/nccl_bench
# on the GPU machine: std::memcpy, fakenccl in one process (1, 2, 4 ranks), fakenccl across
# processes (2, 4 processes) and the real NCCL on one GPU, 4 B to 64 MiB. Carry .deb/.
#   bash ci/gpu-probes/nccl_bandwidth.sh      (OUT=<dir> for the raw output)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
DEPS=/tmp/cuhal-deps; mkdir -p $DEPS; for deb in .deb/*.deb; do dpkg -x "$deb" $DEPS; done
BUILD=build/nccl-bw
nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; nproc
export NCCL_NVLS_ENABLE=0
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF -DCUHAL_BUILD_TESTS=OFF \
  "-DCMAKE_PREFIX_PATH=$DEPS/usr;$DEPS/usr/lib/x86_64-linux-gnu/cmake;$DEPS/usr/share/cmake" \
  "-DCMAKE_CXX_FLAGS=-isystem $DEPS/usr/include" > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
timeout 240 cmake --build $BUILD -j16 --target nccl_bench > "$OUT/build.log" 2>&1; echo "build rc $? at $((SECONDS-T0)) s"
python3 -c "import ctypes; v=ctypes.c_int(); ctypes.CDLL('libnccl.so.2').ncclGetVersion(ctypes.byref(v)); print('NCCL', v.value)"
timeout 300 $BUILD/bench/nccl_bench --benchmark_min_time=0.05s \
  --benchmark_out="$OUT/nccl_bench.json" --benchmark_out_format=json > "$OUT/nccl_bench.txt" 2>&1
echo "nccl_bench rc $? at $((SECONDS-T0)) s"
grep -E "/(1048576|67108864)/" "$OUT/nccl_bench.txt" | cut -c1-220
ls /dev/shm | grep -c fakenccl || true
echo "total $((SECONDS-T0)) s"
