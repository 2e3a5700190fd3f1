#!/usr/bin/env bash
# One device call for VMM and expandable segments: builds the real-driver conformance tests and
# the trace replay test (Release; .deb/ carried for the offline deps), runs the VMM conformance
# tests on the H200 and replays the shipped traces on every allocator (core-expandable included).
#   ci/gpu-probes/expandable.sh       (on the GPU machine)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/expandable-out}; mkdir -p "$OUT"
D=/tmp/deps; mkdir -p $D
for deb in .deb/*.deb; do dpkg -x "$deb" $D; done
T0=$SECONDS
cmake -S . -B build/exp -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF \
  -DCUHAL_BUILD_BENCHMARKS=OFF -DCUHAL_BUILD_CLI=OFF \
  "-DCMAKE_PREFIX_PATH=$D/usr;$D/usr/lib/x86_64-linux-gnu/cmake;$D/usr/share/cmake" \
  "-DCMAKE_CXX_FLAGS=-isystem $D/usr/include" > "$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/exp -j16 --target fakecuda_conformance_real_test replay_real_test \
  > "$OUT/build.log" 2>&1 || { grep -m5 -A5 "error" "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS-T0)) s"
export CUHAL_REAL_REQUIRED=1
timeout 60 build/exp/tests/fakecuda/fakecuda_conformance_real_test --gtest_filter='*Vmm*' \
  > "$OUT/vmm.log" 2>&1
echo "vmm conformance rc $? at $((SECONDS-T0)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|Which is|actual" "$OUT/vmm.log" | head -40
CUHAL_REPLAY_REPEAT=1 timeout 120 build/exp/tests/trace/replay_real_test > "$OUT/replay.log" 2>&1
echo "replay_real rc $? at $((SECONDS-T0)) s"
grep -E "^REPLAY" "$OUT/replay.log" | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("REPLAY-SKIP"): print(line.strip()); continue
    r = json.loads(line[len("REPLAY "):])
    print("%-32s %-16s ns/op %8.1f reserved %8.1f MiB used %8.1f MiB %.3fx" % (r["trace"], r["allocator"], r.get("ns_per_op", 0), r.get("reserved_high", 0) / 2**20, r.get("used_high", 0) / 2**20, r.get("reserved_high", 0) / max(1, r.get("used_high", 1))))
' 2>&1 | head -40
grep -E "Failure|FAILED|error" "$OUT/replay.log" | head -20
echo "total $((SECONDS-T0)) s"
