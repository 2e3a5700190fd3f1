#!/bin/sh
# Copyright 2026 The cuhal Authors.
# libcudart 12 over the drop-in libcuda.so.1 (issue 17): runs ci/gpu-probes/cudart_dlopen_probe
# (a plain C++ program that dlopens the runtime it is given and registers a fat binary as nvcc's
# generated code does) with libcudart.so.12 and with libcudart.so.13 on the drop-in, and checks
#   - that both start (the export tables and the integrity check at the runtime's own version),
#     get every value right (the probe's exit status) and leak nothing (the leak report);
#   - that the two outputs are the same, apart from the first line (the runtime's version) and
#     the differences listed in EXPECTED (cudart12_vs_13.txt): the runtimes map the same driver
#     answers to different runtime errors there.
#   usage: cudart12_test.sh DROPIN_DIR PROBE KERNEL_CU WORK_DIR LIBCUDART12 EXPECTED
# Exit 77 (the test's SKIP_RETURN_CODE), with the reason, when there is no nvcc (the fat binary is
# built with nvcc -fatbin), no libcudart.so.13 beside it, or no LIBCUDART12 (ci/fetch-libcudart12
# fetches Debian's libcudart12 to the default place).
set -u
dropin=$1 probe=$2 kernel=$3 work=$4 cudart12=$5 expected=$6
# shellcheck source=../cudart_catalogue/nvcc.sh
. "$(dirname "$0")/../cudart_catalogue/nvcc.sh"
if ! find_nvcc; then
  nvcc_skip_message
  exit 77
fi
cudart13=$(dirname "$nvcc")/../lib64/libcudart.so.13
if [ ! -e "$cudart13" ]; then
  echo "SKIP: no libcudart.so.13 beside $nvcc ($cudart13)"
  exit 77
fi
if [ ! -e "$cudart12" ]; then
  echo "SKIP: libcudart.so.12 not found at $cudart12: run ci/fetch-libcudart12 (Debian's" \
       "libcudart12), or configure with -DCUHAL_LIBCUDART12=<path of libcudart.so.12>"
  exit 77
fi
mkdir -p "$work" || exit 1
fatbin=$work/cudart_dlopen_kernel.fatbin
if ! "$nvcc" -fatbin -gencode arch=compute_90,code=compute_90 --no-compress "$kernel" \
    -o "$fatbin" >"$work/nvcc.log" 2>&1; then
  cat "$work/nvcc.log"
  echo "FAILED: nvcc -fatbin $kernel"
  exit 1
fi
# The runtime's own allocations at exit are not the fake's: LeakSanitizer is off for this
# uninstrumented library; the fake's leak report checks the driver's objects.
asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail=0
for version in 13 12; do
  if [ "$version" = 12 ]; then lib=$cudart12; else lib=$cudart13; fi
  env LD_LIBRARY_PATH="$dropin" ASAN_OPTIONS="$asan_options" FAKECUDA_LEAK_REPORT=1 \
      FAKECUDA_TRACE_EXPORT_TABLE=1 "$probe" "$lib" "$fatbin" \
      >"$work/out$version.txt" 2>"$work/err$version.txt"
  rc=$?
  echo "== libcudart $version ($lib): exit status $rc"
  cat "$work/out$version.txt"
  grep -v "export table" "$work/err$version.txt"
  if [ "$rc" -ne 0 ]; then
    echo "FAILED: libcudart $version: exit status $rc"
    fail=1
  fi
  if ! head -n 1 "$work/out$version.txt" | grep -Eq "^runtime ${version}[0-9]{3}$"; then
    echo "FAILED: libcudart $version: the first line is not 'runtime ${version}xxx'"
    fail=1
  fi
  for re in 'leak report: none' \
      "integrity_check\\[1\\]\\(version=${version}[0-9]{3}, .*\\) -> 0"; do
    if ! grep -Eq "$re" "$work/err$version.txt"; then
      echo "FAILED: libcudart $version: stderr lacks /$re/"
      fail=1
    fi
  done
done
# The differences: diff's changed lines, "-" for libcudart 13's and "+" for 12's.
tail -n +2 "$work/out13.txt" > "$work/body13.txt"
tail -n +2 "$work/out12.txt" > "$work/body12.txt"
diff -U0 "$work/body13.txt" "$work/body12.txt" | grep -E '^[-+]' | grep -vE '^(---|\+\+\+) ' \
  > "$work/differences.txt"
grep -v '^#' "$expected" > "$work/expected_differences.txt"
if ! cmp -s "$work/differences.txt" "$work/expected_differences.txt"; then
  echo "FAILED: libcudart 12 and 13 differ otherwise than $expected lists; the differences:"
  cat "$work/differences.txt"
  echo "-- diff from the listed ones:"
  diff "$work/expected_differences.txt" "$work/differences.txt"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "libcudart 12 and 13 on the drop-in: both right, differing as listed"
exit $fail
