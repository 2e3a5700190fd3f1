# shellcheck shell=sh
# Copyright 2026 The cuhal Authors.
# Sourced (POSIX sh) by the scripts that build CUDA runtime programs with nvcc at test time
# (run_catalogue.sh here, tests/fakecuda_dropin/cudart_test.sh):
#   find_nvcc            sets $nvcc to the first executable of $CUDACXX, $CUDA_HOME/bin/nvcc,
#                        nvcc on PATH, /usr/local/cuda/bin/nvcc; returns 1 (and $nvcc empty)
#                        when there is none
#   nvcc_compress_option prints --no-compress when libzstd.so.1 is missing (the fake reads
#                        nvcc's compressed PTX through it), nothing otherwise
#   nvcc_skip_message    prints the reason to skip when there is no nvcc
find_nvcc() {
  nvcc=""
  for candidate in "${CUDACXX:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" \
      "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      # shellcheck disable=SC2034  # read by the scripts that source this one
      nvcc=$candidate
      return 0
    fi
  done
  return 1
}

nvcc_compress_option() {
  # grep reads all of ldconfig's output (grep -q would end the pipe early: under pipefail,
  # ldconfig's SIGPIPE would read as libzstd missing).
  if ! /sbin/ldconfig -p 2>/dev/null | grep 'libzstd\.so\.1 ' > /dev/null; then
    echo "--no-compress"
  fi
}

nvcc_skip_message() {
  echo "SKIP: nvcc not found (set CUDACXX or CUDA_HOME, or put nvcc on PATH)"
}
