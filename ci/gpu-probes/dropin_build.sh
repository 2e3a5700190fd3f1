# shellcheck shell=bash
# Copyright 2026 The cuhal Authors.
# Sourced by the GPU-machine scripts that compare the real driver with the drop-in
# (cudart_catalogue.sh, cudart12.sh):
#   build_dropin_and_capture BUILD WORK
# configures BUILD as a Release build of the libraries only (as fuzz.sh does: the same folder,
# build/fuzz-release, serves them all), builds the drop-in libcuda.so.1 and fakecuda_capture
# (logs in WORK/configure.log and WORK/build.log; on failure the first errors are printed and
# the build log copied to $OUT), sets DROPIN to the drop-in's folder, captures GPU 0's profile
# and sets PROFILE to it (WORK/profile/device0.json). Returns 1, saying why, on any failure.
build_dropin_and_capture() {
  local build=$1 work=$2
  mkdir -p "$work/profile" || return 1
  if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF \
      -DCUHAL_BUILD_TESTS=OFF -DCUHAL_BUILD_BENCHMARKS=OFF -DCUHAL_BUILD_CLI=OFF \
      > "$work/configure.log" 2>&1; then
    tail -20 "$work/configure.log"
    return 1
  fi
  if ! timeout 300 cmake --build "$build" -j"$(nproc)" \
      --target cuhal_fakecuda_dropin fakecuda_capture > "$work/build.log" 2>&1; then
    grep -m5 -B2 -A5 "error" "$work/build.log"
    cp "$work/build.log" "${OUT:-$work}/"
    echo "drop-in build failed"
    return 1
  fi
  DROPIN=$(readlink -f "$build/dropin")
  if ! "$build/fakecuda/fakecuda_capture" "$work/profile" 0; then
    echo "profile capture failed"
    return 1
  fi
  PROFILE=$work/profile/device0.json
}
