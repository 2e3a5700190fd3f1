#!/usr/bin/env bash
# Copyright 2026 The cuhal Authors.
# The CUDA runtime catalogue (README.md): builds every <name>.cu of this folder with nvcc, runs
# each on a given libcuda.so.1 and writes its standard output to OUT_DIR/<name>.txt (standard
# error to OUT_DIR/<name>.err); with --expected, compares each with EXPECTED_DIR/<name>.txt.
#   usage: run_catalogue.sh [options] LIBCUDA_DIR OUT_DIR
#          run_catalogue.sh --build-only --bin BIN_DIR [options]
#   LIBCUDA_DIR    put first on LD_LIBRARY_PATH (the drop-in's folder); `system`: the installed
#                  driver, found as usual
#   --bin DIR      where the executables are built (default OUT_DIR/bin); a program is rebuilt
#                  when its source is newer than its executable or its nvcc command changed
#   --build-only   build, run nothing;  --no-build: run the executables already in --bin
#   --only NAME    this program only (may be repeated); default: every *.cu of --source
#   --source DIR   the programs' folder (default: this script's)
#   --env VAR=VAL  set in each program's environment (may be repeated; e.g. FAKECUDA_DEVICES=...)
#   --expected DIR compare each OUT_DIR/<name>.txt with DIR/<name>.txt (diff in OUT_DIR/<name>.diff);
#                  prints `<name>: same`, `<name>: DIFFER (<n> lines)` or `<name>: no expected
#                  output yet`, then the counts; fails unless every program is the same.
#                  DIR/<name>.ignore (optional): extended regular expressions (awk), one a line,
#                  each below a `#` comment line giving the reason; a line of the expected or
#                  the actual output that one matches is not compared (both become
#                  `== not compared (<name>.ignore)`, so that the line must still be there),
#                  reported as `, <n> lines not compared (<name>.ignore)`. DIR/<name>.unmeasured
#                  (optional): the expected output is not the real driver's; its first line is
#                  reported after the result
#   --sanitize[=]S the drop-in's CUHAL_SANITIZE: when non-empty, skip (an nvcc-built program has
#                  no sanitizer runtime to load an instrumented libcuda with)
#   --jobs N       parallel builds and runs (default: the number of CPUs)
#   --timeout S    seconds per program run (default 120)
# A program that does not exit 0 gets a last line `== exit status <n>` in its output, so that a
# crash or a hang (`timeout` gives 124) is a difference too.
# Exit status: 0 all built and ran (and matched, with --expected), 1 otherwise (--build-only: 0
# even when a program did not build; its run fails), 77 (with the reason) when there is no nvcc
# or the drop-in is sanitized.
# shellcheck disable=SC2317  # compile and run_one are called through spawn
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=nvcc.sh
. "$here/nvcc.sh"

usage() { sed -n '6,7p' "$0" | sed 's/^# *//' >&2; exit 2; }
source_dir=$here bin="" build=1 run=1 expected="" sanitize="" timeout_s=120
jobs=$(nproc 2>/dev/null || echo 2)
only=() extra_env=()
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --build-only) run=0; shift ;;
    --no-build) build=0; shift ;;
    --only) only+=("$2"); shift 2 ;;
    --source) source_dir=$2; shift 2 ;;
    --env) extra_env+=("$2"); shift 2 ;;
    --expected) expected=$2; shift 2 ;;
    --sanitize) sanitize=$2; shift 2 ;;
    --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
libcuda="" out=""
if [ $run = 1 ]; then
  [ $# -eq 2 ] || usage
  libcuda=$1 out=$2
  bin=${bin:-$out/bin}
fi
[ -n "$bin" ] || usage

if [ -n "$sanitize" ]; then
  echo "SKIP: the drop-in is built with -fsanitize=$sanitize; an nvcc-built program cannot load it"
  exit 77
fi
if ! find_nvcc; then
  nvcc_skip_message
  exit 77
fi

names=(${only[@]+"${only[@]}"})
if [ ${#names[@]} -eq 0 ]; then
  for source in "$source_dir"/*.cu; do
    [ -e "$source" ] && names+=("$(basename "$source" .cu)")
  done
fi
[ ${#names[@]} -gt 0 ] || { echo "no programs in $source_dir"; exit 1; }
mkdir -p "$bin" || exit 1

# Runs "$@" in the background, at most $jobs at a time (wait_all waits for the rest).
running=0
spawn() {
  if [ $running -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  "$@" &
  running=$((running + 1))
}
wait_all() { wait; running=0; }

# The nvcc command of a program: plain nvcc (static libcudart) plus its `// nvcc-options:`.
compile_command() {  # name
  local source=$source_dir/$1.cu options
  options=$(head -1 "$source" | sed -n 's|^// *nvcc-options:||p')
  echo "$nvcc $(nvcc_compress_option) $options $source -o $bin/$1"
}
compile() {  # name
  local command
  command=$(compile_command "$1")
  if [ -x "$bin/$1" ] && [ ! "$source_dir/$1.cu" -nt "$bin/$1" ] \
      && [ "$command" = "$(cat "$bin/$1.cmd" 2>/dev/null)" ]; then
    return 0
  fi
  rm -f "$bin/$1" "$bin/$1.cmd"
  # shellcheck disable=SC2086  # the command is a list of words (no paths with spaces)
  if $command > "$bin/$1.nvcc.log" 2>&1; then
    echo "$command" > "$bin/$1.cmd"
  else
    echo "FAILED: $command"
    cat "$bin/$1.nvcc.log"
  fi
}

if [ $build = 1 ]; then
  start=$SECONDS
  for name in "${names[@]}"; do spawn compile "$name"; done
  wait_all
  echo "built ${#names[@]} program(s) with $nvcc in $((SECONDS - start)) s ($jobs jobs)"
fi
# A program that did not build fails its run, not the build: with --build-only (CTest's fixture)
# the others still run.
[ $run = 1 ] || exit 0
status=0 not_built=0
for name in "${names[@]}"; do
  if [ ! -x "$bin/$name" ]; then
    not_built=$((not_built + 1))
    echo "$name: NOT BUILT ($bin/$name.nvcc.log):"
    tail -20 "$bin/$name.nvcc.log" 2>/dev/null
    status=1
  fi
done

mkdir -p "$out" || exit 1
library_path=$(dirname "$nvcc")/../lib64  # libcudart.so, for programs built with -cudart shared
[ "$libcuda" = system ] || library_path=$libcuda:$library_path
run_one() {  # name
  local rc
  env LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ${extra_env[@]+"${extra_env[@]}"} \
    timeout -k 10 "$timeout_s" "$bin/$1" > "$out/$1.txt" 2> "$out/$1.err"
  rc=$?
  [ "$rc" -eq 0 ] || echo "== exit status $rc" >> "$out/$1.txt"
}
for name in "${names[@]}"; do
  [ -x "$bin/$name" ] && spawn run_one "$name"
done
wait_all
[ -n "$expected" ] || exit $status

# Checks DIR/<name>.ignore (each regex directly below its comment line); prints what is wrong.
check_ignore() {  # ignore_file
  awk '/^[[:space:]]*$/ { commented = 0; next }
       /^#/ { commented = 1; next }
       { if (!commented) {
           printf "%s:%d: a regex needs its own `#` comment line above it (the reason)\n",
                  FILENAME, FNR
           bad = 1
         }
         commented = 0 }
       END { exit bad }' "$1"
}
# Copies output `in` to `out` with every line matching a regex of `ignore_file` replaced by
# `== not compared (<ignore name>)`; prints how many lines were replaced.
mask_ignored() {  # ignore_file in out
  awk -v tag="== not compared ($(basename "$1"))" -v count_file="$3.count" '
    FNR == NR { if ($0 !~ /^#/ && $0 !~ /^[[:space:]]*$/) re[++n] = $0; next }
    { for (i = 1; i <= n; ++i) if ($0 ~ re[i]) { print tag; ++masked; next } print }
    END { print masked + 0 > count_file }' "$1" "$2" > "$3"
  cat "$3.count"
  rm -f "$3.count"
}

same=0 differ=0 missing=0
for name in "${names[@]}"; do
  [ -x "$bin/$name" ] || continue
  if [ ! -f "$expected/$name.txt" ]; then
    echo "$name: no expected output yet ($expected/$name.txt)"
    missing=$((missing + 1))
    continue
  fi
  want=$expected/$name.txt got=$out/$name.txt note=""
  rm -f "$out/$name.diff"
  if [ -f "$expected/$name.ignore" ]; then
    if ! check_ignore "$expected/$name.ignore"; then
      echo "$name: DIFFER (invalid $name.ignore)"
      differ=$((differ + 1))
      continue
    fi
    mask_ignored "$expected/$name.ignore" "$want" "$out/$name.expected.compared" > /dev/null
    masked=$(mask_ignored "$expected/$name.ignore" "$got" "$out/$name.compared")
    want=$out/$name.expected.compared got=$out/$name.compared
    note=", $masked lines not compared ($name.ignore)"
  fi
  if [ -f "$expected/$name.unmeasured" ]; then
    note="$note; expected output NOT MEASURED: $(head -1 "$expected/$name.unmeasured")"
  fi
  if diff -u --label "expected/$name.txt" --label "$name.txt" "$want" "$got" \
      > "$out/$name.diff"; then
    echo "$name: same$note"
    same=$((same + 1))
  else
    echo "$name: DIFFER ($(tail -n +3 "$out/$name.diff" | grep -c '^[-+]') lines)$note"
    differ=$((differ + 1))
  fi
done
echo "${#names[@]} program(s): $same same, $differ differ, $missing without expected output," \
  "$not_built not built"
for name in "${names[@]}"; do
  if [ -s "$out/$name.diff" ]; then
    echo "--- $name ($out/$name.diff, first 60 lines):"
    head -60 "$out/$name.diff"
  fi
done
[ $((differ + missing)) -eq 0 ] || status=1
exit $status
