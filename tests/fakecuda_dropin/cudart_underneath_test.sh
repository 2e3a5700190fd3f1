#!/bin/sh
# Copyright 2026 The cuhal Authors.
# What the fake offers underneath the CUDA runtime (issue 17): cudart_underneath.cu, built by nvcc
# once (the `build` case, a CTest fixture) and run many times on the drop-in libcuda.so.1.
#   usage: cudart_underneath_test.sh DROPIN_DIR SOURCE WORK_DIR CASE SANITIZE
#   build   nvcc -arch=sm_90 --no-compress (PTX, which the fake runs) and
#           nvcc -gencode arch=compute_80,code=sm_80 (machine code for sm_80 only)
#   faults  the fault sweep: `work` once per fault rule of the table below (FAKECUDA_FAULTS), each
#           in a few seconds at most (timeout): no crash, a non-zero exit with the runtime's name of
#           the injected error printed, and a leak report with no leak but what a failed release
#           leaves; then the n-th driver call failing for every n up to the clean run's count
#           (sampled): no crash, no hang, a runtime error printed or success
#   leaks   the leak report after cudaDeviceReset: the runtime's retains named as its own
#   race    the race detector on a kernel/copy race across streams, none when an event orders
#           them; two runs under the adversarial scheduler with one seed print the same
#   sass    the sm_80-only program on the H200 profile: cudaErrorNoKernelImageForDevice
# Exit 77 (SKIP_RETURN_CODE), with the reason, without nvcc or when the drop-in is built with
# sanitizers (an nvcc-built program cannot load it), as cudart_test.sh.
set -u
dropin=$1 source=$2 work=$3 case=$4 sanitize=${5:-}
if [ -n "$sanitize" ]; then
  echo "SKIP: the drop-in is built with -fsanitize=$sanitize; an nvcc-built program cannot load it"
  exit 77
fi
nvcc=""
for candidate in "${CUDACXX:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" \
    "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    nvcc=$candidate
    break
  fi
done
if [ -z "$nvcc" ]; then
  echo "SKIP: nvcc not found (set CUDACXX or CUDA_HOME, or put nvcc on PATH)"
  exit 77
fi
exe=$work/cudart_underneath
exe80=$work/cudart_underneath_sm80
fail=0
failed() {
  echo "FAILED: $*"
  fail=1
}

if [ "$case" = build ]; then
  mkdir -p "$work" || exit 1
  rm -f "$exe" "$exe80"
  for build in "$exe:-arch=sm_90 --no-compress" "$exe80:-gencode arch=compute_80,code=sm_80"; do
    out=${build%%:*} options=${build#*:}
    echo "$nvcc $options $source -o $out"
    # shellcheck disable=SC2086  # $options is a list of options
    if ! "$nvcc" $options "$source" -o "$out" >"$out.nvcc.log" 2>&1; then
      cat "$out.nvcc.log"
      echo "FAILED: nvcc"
      exit 1
    fi
  done
  exit 0
fi
if [ ! -x "$exe" ] || [ ! -x "$exe80" ]; then
  echo "FAILED: $exe or $exe80 missing (built by the test fakecuda_dropin_cudart_underneath_build)"
  exit 1
fi

# run PROGRAM MODE [VAR=VALUE...]: runs it on the drop-in with the leak report on, at most 20 s;
# sets $out (stdout and stderr) and $rc.
run() {
  program=$1 mode=$2
  shift 2
  out=$(env LD_LIBRARY_PATH="$dropin" FAKECUDA_LEAK_REPORT=1 "$@" timeout 20 "$program" "$mode" \
        2>&1)
  rc=$?
}
has() { echo "$out" | grep -Eq "$1"; }

case $case in
faults)
  run "$exe" work
  if [ "$rc" -ne 0 ] || ! has '^work: OK' || ! has 'leak report: none$'; then
    failed "the clean run: $out"
  fi
  # entry:nth:error:the runtime's error:what the leak report must say
  # The runtime's error numbers equal the driver's for these (cudaErrorMemoryAllocation 2 for
  # CUDA_ERROR_OUT_OF_MEMORY, cudaErrorNoKernelImageForDevice 209 for NO_BINARY_FOR_GPU, ...).
  # A failed release leaves its object: the leak report lists it as the program's, left to the
  # runtime's teardown at exit.
  for rule in \
      'cuMemAlloc:1:CUDA_ERROR_OUT_OF_MEMORY:cudaErrorMemoryAllocation:none' \
      'cuMemAlloc:2:CUDA_ERROR_OUT_OF_MEMORY:cudaErrorMemoryAllocation:none' \
      'cuMemHostAlloc:1:CUDA_ERROR_OUT_OF_MEMORY:cudaErrorMemoryAllocation:none' \
      'cuStreamCreate:1:CUDA_ERROR_OUT_OF_MEMORY:cudaErrorMemoryAllocation:none' \
      'cuEventCreate:2:CUDA_ERROR_OUT_OF_MEMORY:cudaErrorMemoryAllocation:none' \
      'cuEventRecord:1:CUDA_ERROR_INVALID_HANDLE:cudaErrorInvalidResourceHandle:none' \
      'cuMemcpyHtoDAsync:1:CUDA_ERROR_INVALID_VALUE:cudaErrorInvalidValue:none' \
      'cuMemsetD8Async:1:CUDA_ERROR_INVALID_VALUE:cudaErrorInvalidValue:none' \
      'cuLibraryLoadData:1:CUDA_ERROR_NO_BINARY_FOR_GPU:cudaErrorNoKernelImageForDevice:none' \
      'cuLibraryGetKernel:1:CUDA_ERROR_NOT_FOUND:cudaErrorSymbolNotFound:none' \
      'cuLaunchKernel:1:CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:cudaErrorLaunchOutOfResources:none' \
      'cuMemcpyDtoDAsync:1:CUDA_ERROR_INVALID_VALUE:cudaErrorInvalidValue:none' \
      'cuMemcpyDtoHAsync:1:CUDA_ERROR_UNKNOWN:cudaErrorUnknown:none' \
      'cuStreamSynchronize:1:CUDA_ERROR_UNKNOWN:cudaErrorUnknown:none' \
      'cuEventSynchronize:1:CUDA_ERROR_INVALID_HANDLE:cudaErrorInvalidResourceHandle:none' \
      'cuEventElapsedTime:1:CUDA_ERROR_NOT_READY:cudaErrorNotReady:none' \
      'cuEventDestroy:1:CUDA_ERROR_INVALID_HANDLE:cudaErrorInvalidResourceHandle:1 event.s.$' \
      'cuStreamDestroy:1:CUDA_ERROR_INVALID_HANDLE:cudaErrorInvalidResourceHandle:1 stream.s.$' \
      'cuMemFreeHost:1:CUDA_ERROR_INVALID_VALUE:cudaErrorInvalidValue:1 pinned host alloc.*' \
      'cuMemFree:2:CUDA_ERROR_INVALID_VALUE:cudaErrorInvalidValue:1 device allocation.s.$'; do
    spec=$(echo "$rule" | cut -d: -f1-3 | sed 's/:/:nth:/')
    expected=$(echo "$rule" | cut -d: -f4) leak=$(echo "$rule" | cut -d: -f5)
    run "$exe" work FAKECUDA_FAULTS="$spec"
    echo "$spec: exit $rc; $(echo "$out" | grep -E '^runtime error|leak report' | tr '\n' ' ')"
    if [ "$rc" -ne 1 ]; then failed "$spec: exit $rc, not 1"; fi
    has "^runtime error: $expected " || failed "$spec: no 'runtime error: $expected'"
    has "leak report: $leak" || failed "$spec: the leak report is not '$leak': $out"
  done
  # Faults in the runtime's own teardown at exit (it ignores them): what it then keeps is named
  # as the runtime's, not the program's.
  for rule in 'cuLibraryUnload:1 library' 'cuDevicePrimaryCtxRelease:1 primary context retain'; do
    spec="${rule%%:*}:nth:1:CUDA_ERROR_UNKNOWN"
    run "$exe" work FAKECUDA_FAULTS="$spec"
    echo "$spec: exit $rc; $(echo "$out" | grep -E 'leak report' | tr '\n' ' ')"
    if [ "$rc" -ne 0 ] ||
        ! has "leak report: none \(not leaks: ${rule#*:}\(.*\) held by the CUDA runtime\)"; then
      failed "$spec: $out"
    fi
  done
  # The n-th driver call failing, for every 4th n up to 800 (the clean run makes about 625 with
  # CUDA 13.0: the runtime's start the first 575 or so, most of them cuGetProcAddress; then the
  # program's): no crash, no hang.
  runs=0
  n=1
  while [ "$n" -le 800 ]; do
    run "$exe" work FAKECUDA_FAULTS="*:nth:$n:CUDA_ERROR_UNKNOWN"
    runs=$((runs + 1))
    if [ "$rc" -eq 0 ] && has '^work: OK' && has 'leak report: none($| \(not leaks: )'; then
      : # the fault hit a call whose failure the runtime absorbs, or none was made
    elif [ "$rc" -eq 1 ] && has '^runtime error: '; then
      :
    else
      failed "*:nth:$n: exit $rc (124: hung; 139: crashed): $out"
    fi
    n=$((n + 4))
  done
  echo "generic sweep: $runs runs"
  ;;
leaks)
  run "$exe" reset
  if [ "$rc" -ne 0 ] || ! has '^reset: OK'; then failed "reset: exit $rc"; fi
  has 'leak report: none \(not leaks: 2 primary context retain\(s\) held by the CUDA runtime\)' ||
    failed "reset: the runtime's two retains (one per cudaDeviceReset) are not named as its own"
  has 'outstanding cuDevicePrimaryCtxRetain' && failed "reset: a retain blamed on the program"
  echo "$out"
  run "$exe" leak
  if [ "$rc" -ne 0 ] || ! has '^leak: OK'; then failed "leak: exit $rc"; fi
  has 'leak report: 1 primary context retain\(s\) \(not leaks: 2 primary' ||
    failed "leak: the program's own retain is not reported as its leak"
  has 'primary context of device 0: 1 outstanding cuDevicePrimaryCtxRetain' ||
    failed "leak: no line on the program's retain"
  echo "$out"
  ;;
race)
  run "$exe" race FAKECUDA_RACECHECK=report
  echo "$out"
  [ "$rc" -eq 0 ] || failed "race: exit $rc"
  has '^fakecuda: race: cuMemcpyDtoHAsync on stream [0-9]+ \(non-blocking\) reads .* and '\
'cuLaunchKernel on stream [0-9]+ \(non-blocking\) writes .* with no happens-before' ||
    failed "race: no race report for the kernel and the copy"
  run "$exe" race FAKECUDA_RACECHECK=fail
  has '^runtime error: cudaErrorIllegalState .* at cudaMemcpyAsync DtoH on b' ||
    failed "race under FAKECUDA_RACECHECK=fail: the copy does not fail with cudaErrorIllegalState"
  run "$exe" ordered FAKECUDA_RACECHECK=report
  echo "$out"
  [ "$rc" -eq 0 ] || failed "ordered: exit $rc"
  has 'fakecuda: race' && failed "ordered: a race reported where an event orders the two"
  has 'read on b: host\[0\]=1000 host\[1023\]=2023' || failed "ordered: the copy read stale data"
  # Determinism: the adversarial scheduler orders the two streams' work from its seed; the same
  # seed, the same output (what the racy copy read, the event times).
  for seed in 1 2 3; do
    for mode in race work; do
      run "$exe" "$mode" FAKECUDA_POLICY=adversarial FAKECUDA_SEED=$seed
      first=$out
      run "$exe" "$mode" FAKECUDA_POLICY=adversarial FAKECUDA_SEED=$seed
      echo "$mode, seed $seed: $(echo "$first" | grep -E '^(read on b|work:)' | head -1)"
      [ "$first" = "$out" ] || failed "$mode, seed $seed: two runs differ: '$first' and '$out'"
    done
  done
  ;;
sass)
  run "$exe80" work FAKECUDA_RACECHECK=report
  echo "$out"
  [ "$rc" -eq 1 ] || failed "sass: exit $rc, not 1"
  has '^runtime error: cudaErrorNoKernelImageForDevice \(209\) at AddIndex<<<>>>' ||
    failed "sass: the launch is not cudaErrorNoKernelImageForDevice"
  has 'leak report: none$' || failed "sass: a leak"
  ;;
*)
  echo "FAILED: unknown case $case"
  exit 1
  ;;
esac
exit $fail
