#!/bin/sh
# Copyright 2026 The cuhal Authors.
# Adds a GPU run's real-driver transcripts to the corpus and drops the seeds that today's
# generator no longer makes as recorded (docs/fuzzing.md, "The real driver's corpus").
#   usage: add_run.sh CUHAL_FUZZ CORPUS.tgz [NEW_REAL_DIR ...]
# NEW_REAL_DIR: a run's real transcripts (<seed>.txt, as `cuhal_fuzz --backend real
# --transcript-dir` writes them; ci/gpu-probes/fuzz.sh's real/); a seed there replaces the
# corpus's. Only transcripts that ended are taken (last line END, or CRASH: the driver's answer
# up to it is kept). Then the fake runs every seed and each transcript is compared with the
# fake's, line by line, up to the first line that differs:
#   - the same lines: kept (the fake agrees);
#   - the first difference is in a result (after " -> "): kept, a mismatch (fuzz_real_corpus
#     fails on it until the fake is fixed or the seed is listed in known_differences.txt);
#   - the first difference is in the call itself (before " -> "), every earlier result being
#     the same: the generator or the executor changed what this seed makes; dropped, counted.
# Rewrites CORPUS.tgz (real/<seed>.txt) and prints the counts. With no NEW_REAL_DIR it only
# drops the stale seeds. Run it with a Release cuhal_fuzz (about 30 s per 3,000 seeds on 2 cores).
set -u
[ $# -ge 2 ] || { echo "usage: add_run.sh CUHAL_FUZZ CORPUS.tgz [NEW_REAL_DIR ...]" >&2; exit 2; }
fuzz=$1 corpus=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/cuhal-corpus.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/c/real" "$work/fake"
tar xzf "$corpus" -C "$work/c" || { echo "add_run.sh: cannot unpack $corpus" >&2; exit 1; }
before=$(ls "$work/c/real" | wc -l)
added=0 replaced=0 unfinished=0
for dir in "$@"; do
  for file in "$dir"/*.txt; do
    [ -e "$file" ] || continue
    name=$(basename "$file")
    case "${name%.txt}" in ''|*[!0-9]*) continue ;; esac  # <seed>.txt only
    if ! tail -n 1 "$file" | grep -Eq '^(END|CRASH)'; then
      unfinished=$((unfinished + 1))
      continue
    fi
    if [ -e "$work/c/real/$name" ]; then replaced=$((replaced + 1)); else added=$((added + 1)); fi
    cp "$file" "$work/c/real/$name"
  done
done
"$fuzz" --backend fake --seeds-from "$work/c/real" --transcript-dir "$work/fake" --batch 200 \
        --timeout 60 --show 0 > "$work/fake.log" 2>&1
stale=0 kept=0 mismatching=0
for file in "$work"/c/real/*.txt; do
  name=$(basename "$file")
  verdict=$(awk -v fake="$work/fake/$name" '
    BEGIN { n = 0; while ((getline line < fake) > 0) f[++n] = line }
    FNR == 1 { next }  # the "# seed N backend B" header
    {
      i = FNR
      if (i > n || $0 != f[i]) {
        a = $0; b = (i <= n) ? f[i] : ""
        sub(/ -> .*/, "", a); sub(/ -> .*/, "", b)
        print (a == b ? "mismatch" : "stale"); found = 1; exit
      }
    }
    END { if (!found) print "same" }' "$file")
  case "$verdict" in
    stale) stale=$((stale + 1)); rm -f "$file" ;;
    mismatch) mismatching=$((mismatching + 1)); kept=$((kept + 1)) ;;
    *) kept=$((kept + 1)) ;;
  esac
done
tar czf "$corpus" -C "$work/c" real || { echo "add_run.sh: cannot write $corpus" >&2; exit 1; }
echo "corpus $corpus: $before sequences before; $added added, $replaced replaced," \
     "$unfinished not taken (unfinished); $stale dropped (the generator makes another sequence" \
     "now); $kept kept, $mismatching of them answered differently by the fake"
