#!/bin/sh
# Copyright 2026 The cuhal Authors.
# Checks add_run.sh on a corpus of the fake's own transcripts (no GPU needed: the fake stands in
# for the real driver, so every untouched seed agrees): a run whose transcripts are
#   seed 1: the fake's, unchanged                      -> kept, the same;
#   seed 2: a result changed (after " -> ")            -> kept, a mismatch;
#   seed 3: a call's argument changed (before " -> ")  -> dropped, stale;
#   seed 4: without its last line (unfinished)         -> not taken;
#   seed 5: the fake's, new to the corpus              -> added;
# on a corpus holding seeds 1, 2 and 3, and checks the printed counts and the corpus it rewrites.
#   usage: add_run_test.sh CUHAL_FUZZ WORK_DIR
set -u
fuzz=$1 work=$2
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work/fake" "$work/corpus/real" "$work/run" || exit 1
"$fuzz" --backend fake --seeds 1..5 --transcript-dir "$work/fake" --batch 5 --timeout 60 \
  > "$work/fake.log" 2>&1 || { cat "$work/fake.log"; echo "FAILED: the fake's run"; exit 1; }
for s in 1 2 3; do cp "$work/fake/$s.txt" "$work/corpus/real/"; done
tar czf "$work/corpus.tgz" -C "$work/corpus" real || exit 1
cp "$work/fake/1.txt" "$work/fake/5.txt" "$work/run/"
# seed 2: the first call's result; seed 3: the first call's first argument.
awk 'FNR == 1 || done { print; next } /^0 / { sub(/ -> .*/, " -> CUDA_ERROR_UNKNOWN"); done = 1 }
     { print }' "$work/fake/2.txt" > "$work/run/2.txt"
awk 'FNR == 1 || done { print; next } /^0 / { sub(/ a=[^ ]*/, " a=h999"); done = 1 } { print }' \
  "$work/fake/3.txt" > "$work/run/3.txt"
sed '$d' "$work/fake/4.txt" > "$work/run/4.txt"
cmp -s "$work/fake/2.txt" "$work/run/2.txt" && { echo "FAILED: seed 2 not changed"; exit 1; }
cmp -s "$work/fake/3.txt" "$work/run/3.txt" && { echo "FAILED: seed 3 not changed"; exit 1; }
out=$(sh "$here/add_run.sh" "$fuzz" "$work/corpus.tgz" "$work/run" 2>&1)
echo "$out"
fail=0
expected="3 sequences before; 1 added, 3 replaced, 1 not taken (unfinished); 1 dropped"
echo "$out" | grep -q "$expected" || { echo "FAILED: expected '$expected'"; fail=1; }
echo "$out" | grep -q "3 kept, 1 of them answered differently" \
  || { echo "FAILED: expected '3 kept, 1 of them answered differently'"; fail=1; }
left=$(tar tzf "$work/corpus.tgz" | grep -E 'real/[0-9]+\.txt$' | sed 's|real/||' | sort -n |
       tr '\n' ' ')
[ "$left" = "1.txt 2.txt 5.txt " ] || { echo "FAILED: the corpus holds $left, not 1 2 5"; fail=1; }
[ "$fail" -eq 0 ] && echo "add_run.sh: kept, replaced, dropped and skipped as expected"
exit $fail
