#!/bin/sh
# Copyright 2026 The cuhal Authors.
# The CUDA runtime over the drop-in libcuda.so.1 (issue 17): builds cudart_program.cu with nvcc
# and runs it on the drop-in with two devices, the leak report and
# the export-table trace on; checks its results, that the runtime found its private tables and
# passed the integrity check, and that nothing leaked.
#   usage: cudart_test.sh DROPIN_DIR SOURCE WORK_DIR static|shared SANITIZE
# static: plain `nvcc` (static libcudart, nvcc's default architecture, the fat binary's PTX
# compressed with Zstd, which the fake reads through libzstd.so.1; without it the build adds
# --no-compress and says so); shared: `nvcc -arch=sm_90 --no-compress -cudart shared`.
# Exit 77 (the test's SKIP_RETURN_CODE), with the reason, when there is no nvcc (looked for in
# $CUDACXX, $CUDA_HOME/bin, PATH and /usr/local/cuda/bin) or when the drop-in is built with
# sanitizers (SANITIZE non-empty: a program nvcc builds has no sanitizer runtime to load it with).
set -u
dropin=$1 source=$2 work=$3 mode=$4 sanitize=${5:-}
if [ -n "$sanitize" ]; then
  echo "SKIP: the drop-in is built with -fsanitize=$sanitize; an nvcc-built program cannot load it"
  exit 77
fi
# shellcheck source=../cudart_catalogue/nvcc.sh
. "$(dirname "$0")/../cudart_catalogue/nvcc.sh"
if ! find_nvcc; then
  nvcc_skip_message
  exit 77
fi
cuda_lib=$(dirname "$nvcc")/../lib64  # libcudart.so.13, for the shared build
mkdir -p "$work" || exit 1
exe=$work/cudart_program_$mode
options="-arch=sm_90 --no-compress -cudart shared"
if [ "$mode" = static ]; then
  options=$(nvcc_compress_option)  # plain nvcc: its default architecture, compressed PTX
  [ -n "$options" ] && echo "note: libzstd.so.1 not found: building with --no-compress"
fi
echo "$nvcc $options $source -o $exe"
# shellcheck disable=SC2086  # $options is a list of options
if ! "$nvcc" $options "$source" -o "$exe" >"$exe.nvcc.log" 2>&1; then
  cat "$exe.nvcc.log"
  echo "FAILED: nvcc"
  exit 1
fi
out=$(env LD_LIBRARY_PATH="$dropin:$cuda_lib" FAKECUDA_DEVICES=2 FAKECUDA_LEAK_REPORT=1 \
      FAKECUDA_TRACE_EXPORT_TABLE=1 "$exe" 2>&1)
rc=$?
echo "$out"
fail=0
if [ "$rc" -ne 0 ]; then
  echo "FAILED: exit status $rc"
  fail=1
fi
for re in 'cudart program: OK \(2 device' 'kernel: 4096 elements right' \
    'cuGetExportTable\(6bd5fb6c-5bf4-e74a-8987-d93912fd9df9\) -> cudart_interface' \
    'integrity_check\[1\]\(version=[0-9]+, .*\) -> 0' \
    'leak report: none'; do
  if ! echo "$out" | grep -Eq "$re"; then
    echo "FAILED: output lacks /$re/"
    fail=1
  fi
done
if echo "$out" | grep -q "FAILED"; then fail=1; fi
exit $fail
