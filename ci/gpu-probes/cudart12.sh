#!/usr/bin/env bash
# libcudart 12 and 13 on the real driver and on the drop-in (issue 17): cudart_dlopen_probe.cc
# (a plain C++ program that dlopens the runtime it is given and registers a fat binary as nvcc's
# generated code does) run with each runtime, with and without the launch of an unregistered
# host function (--no-unregistered: libcudart 13 hands that pointer to cuLaunchKernel, which the
# real driver may not survive), on GPU 0 and on the drop-in with GPU 0's captured profile.
#   ci/fetch-libcudart12                          (on the development machine: .deps/libcudart12)
#   OUT=/tmp/out bash ci/gpu-probes/cudart12.sh   (on the GPU machine; run with carry [".deps"])
# libcudart.so.12: $CUHAL_LIBCUDART12, else .deps/libcudart12/usr/lib/x86_64-linux-gnu/; 13: the
# toolkit's (nvcc's lib64). Builds the Release drop-in and fakecuda_capture in build/fuzz-release
# (as fuzz.sh and cudart_catalogue.sh do). Results: $OUT/cudart12.summary.txt (per runtime and
# variant: exit status and whether the fake's output equals the real one; the differences) and
# $OUT/cudart12.tar.gz (every output). The real outputs of libcudart 12 are the measured
# expectations of tests/fakecuda_dropin/cudart12_vs_13.txt's list: compare them there.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
WORK=${CUHAL_CUDART12_WORK:-/tmp/cuhal_cudart12}
BUILD=${CUHAL_CUDART12_BUILD:-build/fuzz-release}
CUDART12=${CUHAL_LIBCUDART12:-$PWD/.deps/libcudart12/usr/lib/x86_64-linux-gnu/libcudart.so.12}
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
CUDART13=$(dirname "$NVCC")/../lib64/libcudart.so.13
export CUDA_VISIBLE_DEVICES=0
rm -rf "$WORK"; mkdir -p "$WORK/out"
for f in "$CUDART12" "$CUDART13" "$NVCC"; do
  [ -e "$f" ] || { echo "missing: $f" | tee "$OUT/cudart12.summary.txt"; exit 1; }
done
{
  echo "date: $(date -u '+%F %T UTC')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "libcudart 12: $CUDART12"
  echo "libcudart 13: $CUDART13"
} | tee "$WORK/out/machine.txt"

# shellcheck source=dropin_build.sh
. ci/gpu-probes/dropin_build.sh
build_dropin_and_capture "$BUILD" "$WORK" || exit 1
g++ -std=c++20 -O1 -Wall ci/gpu-probes/cudart_dlopen_probe.cc -o "$WORK/probe" -ldl || exit 1
"$NVCC" -fatbin -gencode arch=compute_90,code=compute_90 --no-compress \
  ci/gpu-probes/cudart_dlopen_kernel.cu -o "$WORK/kernel.fatbin" || exit 1
echo "built at $((SECONDS - T0)) s"

summary=$WORK/out/summary.txt
cp "$WORK/out/machine.txt" "$summary"
for version in 12 13; do
  lib=$CUDART12; [ "$version" = 13 ] && lib=$CUDART13
  for variant in full no-unregistered; do
    args=("$lib" "$WORK/kernel.fatbin"); [ "$variant" = full ] || args+=(--no-unregistered)
    name=cudart$version.$variant
    timeout 60 "$WORK/probe" "${args[@]}" >"$WORK/out/$name.real.txt" 2>"$WORK/out/$name.real.err"
    real_rc=$?
    env LD_LIBRARY_PATH="$DROPIN" FAKECUDA_DEVICES="$PROFILE" \
        FAKECUDA_LEAK_REPORT=1 timeout 60 "$WORK/probe" "${args[@]}" \
        >"$WORK/out/$name.fake.txt" 2>"$WORK/out/$name.fake.err"
    fake_rc=$?
    if diff "$WORK/out/$name.real.txt" "$WORK/out/$name.fake.txt" >"$WORK/out/$name.diff"; then
      same=same
    else
      same="DIFFER ($(grep -c '^[<>]' "$WORK/out/$name.diff") lines)"
    fi
    echo "$name: real exit $real_rc, fake exit $fake_rc, $same" | tee -a "$summary"
    head -n 40 "$WORK/out/$name.diff" >> "$summary"
  done
done
cp "$summary" "$OUT/cudart12.summary.txt"
tar czf "$OUT/cudart12.tar.gz" -C "$WORK" out
echo "total $((SECONDS - T0)) s"
