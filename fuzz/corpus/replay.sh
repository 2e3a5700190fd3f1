#!/bin/sh
# Copyright 2026 The cuhal Authors.
# Replays the fake on every sequence of a real-driver transcript corpus and compares: each
# sequence must answer as the real driver did, except the seeds listed in the known-differences
# file (each with its class and why), and a listed seed that now agrees fails the test too (the
# list must shrink as the fake improves). docs/fuzzing.md, "The real driver's corpus".
#   usage: replay.sh CUHAL_FUZZ CORPUS.tgz KNOWN.txt WORK_DIR
set -u
fuzz=$1 corpus=$2 known=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
tar xzf "$corpus" -C "$work" || { echo "FAILED: cannot unpack $corpus"; exit 1; }
"$fuzz" --backend fake --seeds-from "$work/real" --transcript-dir "$work/fake" --batch 200 \
        --timeout 60 --show 3 || { echo "FAILED: the fake's run"; exit 1; }
exec "$fuzz" --compare "$work/fake" "$work/real" --known "$known" --show 10
